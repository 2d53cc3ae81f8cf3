-- snowflake_next() and snowflake_next(gene): bare C functions of the library (src/sql.rs
-- says why). snowflake_next(gene) is not strict: a NULL gene is an error, not a NULL id.
CREATE FUNCTION snowflake_next() RETURNS bigint
    VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'snowflake_next';
CREATE FUNCTION snowflake_next(gene bigint) RETURNS bigint
    VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'snowflake_next_gene';
