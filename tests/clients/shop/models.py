"""docs/clients.md's Django models: primary keys that take snowflake_next() from the
column's DEFAULT, and the db_default one whose bulk_create() is the trap."""

from django.db import models


class SnowflakeAutoField(models.BigAutoField):
    """A BigAutoField whose column is a plain bigint with DEFAULT snowflake_next() in
    place of an identity: Django still treats it as its auto field (left out of INSERTs,
    read back with RETURNING, by create() and bulk_create() alike)."""

    def db_type_suffix(self, connection):
        return "DEFAULT snowflake_next()"


class Customer(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    name = models.TextField(unique=True)


class Order(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, null=True)
    item = models.TextField(unique=True)


class LegacyOrder(models.Model):
    """A model that had Django's BigAutoField (an identity column) and was moved onto
    SnowflakeAutoField by a migration: AlterField, then RunSQL of snowflake_convert."""

    id = SnowflakeAutoField(primary_key=True)
    item = models.TextField(unique=True)


class DbDefaultOrder(models.Model):
    """The trap: a primary key with db_default. bulk_create() sends DEFAULT and reads the
    ids back, but leaves each object's pk as the DatabaseDefault it started with."""

    id = models.BigIntegerField(primary_key=True, db_default=models.Func(function="snowflake_next"))
    item = models.TextField(unique=True)
