-- Text forms of an id (snowflake_core/src/text_form.rs): Crockford base32, 13 characters,
-- and base62, 11, both in ASCII order and full width, so that under COLLATE "C" the texts
-- sort as the ids do. Immutable: no setting changes them.

-- snowflake_sql_form(name): the form's alphabet, or the native error for another name.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_form(form text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  -- Any case, as PostgreSQL's encode() reads its format (ASCII only, as the native).
  CASE translate(form, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
    WHEN 'base32' THEN RETURN '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    WHEN 'base62' THEN RETURN '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    ELSE
      RAISE EXCEPTION 'unknown text form "%"', form
        USING ERRCODE = 'invalid_parameter_value',
              DETAIL = 'The text forms are base32 (Crockford''s, 13 characters) and base62 (11 characters).';
  END CASE;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowflake_encode(id bigint, form text DEFAULT 'base32')
RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  alphabet text := @extschema@.snowflake_sql_form(form);
  base integer := length(alphabet);
  width integer := CASE base WHEN 32 THEN 13 ELSE 11 END;
  rest bigint := id;
  digits text := '';
BEGIN
  IF id < 0 THEN
    RAISE EXCEPTION 'snowflake id % is negative', id
      USING ERRCODE = 'numeric_value_out_of_range',
            DETAIL = 'Snowflake ids are 0 or greater: their sign bit is always 0.';
  END IF;
  FOR i IN 1 .. width LOOP
    digits := substr(alphabet, (rest % base)::integer + 1, 1) || digits;
    rest := rest / base;
  END LOOP;
  RETURN digits;
END
$$;

CREATE OR REPLACE FUNCTION @extschema@.snowflake_decode(encoded text, form text DEFAULT 'base32')
RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  alphabet text := @extschema@.snowflake_sql_form(form);
  base integer := length(alphabet);
  name text := CASE base WHEN 32 THEN 'base32' ELSE 'base62' END;
  width integer := CASE base WHEN 32 THEN 13 ELSE 11 END;
  syntax text := CASE base
    WHEN 32 THEN 'A base32 snowflake id is 13 Crockford base32 digits: 0-9 and A-Z without I, L, O and U, in either case; I and L read as 1, O as 0.'
    ELSE 'A base62 snowflake id is 11 digits 0-9, A-Z and a-z, case sensitive.' END;
  c text;
  digit integer;
  value numeric := 0;
BEGIN
  IF char_length(encoded) <> width THEN
    RAISE EXCEPTION 'invalid % snowflake id "%": it has % characters, not %', name, encoded,
        char_length(encoded), width
      USING ERRCODE = 'invalid_text_representation', DETAIL = syntax;
  END IF;
  FOR i IN 1 .. width LOOP
    c := substr(encoded, i, 1);
    IF base = 32 THEN
      -- Crockford's base32 reads either case, and I, L and O as 1, 1 and 0.
      c := translate(c, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
      c := translate(c, 'ILO', '110');
    END IF;
    digit := strpos(alphabet, c) - 1;
    IF digit < 0 THEN
      c := substr(encoded, i, 1);
      RAISE EXCEPTION 'invalid % snowflake id "%": % at position % is not a % digit', name, encoded,
          -- A character that does not print shows as its code point.
          CASE WHEN ascii(c) < 32 OR ascii(c) BETWEEN 127 AND 159
               THEN 'U+' || lpad(upper(to_hex(ascii(c))), 4, '0') ELSE '"' || c || '"' END,
          i, name
        USING ERRCODE = 'invalid_text_representation', DETAIL = syntax;
    END IF;
    value := value * base + digit;
  END LOOP;
  IF value > 9223372036854775807 THEN
    RAISE EXCEPTION '% snowflake id "%" is out of range', name, encoded
      USING ERRCODE = 'numeric_value_out_of_range',
            DETAIL = format('The largest %s snowflake id is %s: 9223372036854775807.', name,
                            @extschema@.snowflake_encode(9223372036854775807, name));
  END IF;
  RETURN value;
END
$$;
