//! The SQL functions inside a real server (`cargo pgrx test`).

#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn one(query: &str) -> i64 {
        Spi::get_one::<i64>(query).unwrap().unwrap()
    }

    #[pg_test]
    fn next_ids_strictly_increase_in_one_backend() {
        let distinct_and_ordered = Spi::get_one::<bool>(
            "SELECT count(DISTINCT id) = 300000 AND bool_and(id > prev)
               FROM (SELECT id, lag(id, 1, -1) OVER (ORDER BY n) AS prev
                       FROM (SELECT n, snowflake_next() AS id
                               FROM generate_series(1, 300000) n) minted) ids",
        );
        assert_eq!(distinct_and_ordered, Ok(Some(true)));
    }

    #[pg_test]
    fn next_id_carries_this_backend_and_the_time_of_the_call() {
        let row = Spi::get_two::<bool, bool>(
            "SELECT abs(extract(epoch FROM p.ts - clock_timestamp())) < 1.5,
                    p.node_id = 0 AND p.worker_id = p.backend_slot AND p.backend_slot >= 0
               FROM snowflake_parse(snowflake_next()) p",
        );
        assert_eq!(row, Ok((Some(true), Some(true))));
    }

    #[pg_test]
    fn node_id_lands_in_the_worker_bits() {
        Spi::run("SET snowflake.node_id = 3").unwrap();
        let (node, worker_high) = Spi::get_two::<i32, i32>(
            "SELECT node_id, worker_id >> 8 FROM snowflake_parse(snowflake_next())",
        )
        .unwrap();
        assert_eq!((node, worker_high), (Some(3), Some(3)));
    }

    /// Ids of one backend minted 0.3 ms apart (the sleep refers to the row, so it runs for
    /// each): the sequence follows the clock inside the ms, at its fraction, not from 0.
    #[pg_test]
    fn the_sequence_follows_the_clock_inside_the_millisecond() {
        let (follows, ids) = Spi::get_two::<bool, i64>(
            "WITH minted AS (
               SELECT n, snowflake_next() AS id, clock_timestamp() AS after
                 FROM generate_series(1, 2000) n, LATERAL pg_sleep(0.0003 + 0 * n) pause)
             SELECT bool_and(p.ts < date_trunc('milliseconds', after)
                             -- clock_timestamp() has microseconds: up to one more of them.
                             OR p.sequence <= (extract(microseconds FROM after)::bigint % 1000 + 1) * 4096 / 1000),
                    count(*) FILTER (WHERE p.sequence > 0)
               FROM minted, LATERAL snowflake_parse(id) p",
        )
        .unwrap();
        assert_eq!(follows, Some(true));
        // Sleeping 0.3 ms between calls, each call finds the clock ahead of the last
        // sequence: only a call in the first 0.25 us of a ms gets sequence 0.
        assert!(ids.unwrap() > 1900, "{ids:?}");
    }

    #[pg_test(error = "invalid value for parameter \"snowflake.node_id\": 4")]
    fn a_node_id_beyond_the_node_bits_is_refused_by_set() {
        Spi::run("SET snowflake.node_id = 4").unwrap();
    }

    #[pg_test]
    fn floor_is_the_millisecond_shifted_past_the_low_bits() {
        assert_eq!(one("SELECT snowflake_floor('2020-01-01 00:00:00+00')"), 0);
        assert_eq!(
            one("SELECT snowflake_floor('2020-01-01 00:00:00.001+00')"),
            1 << 22
        );
        assert_eq!(
            one("SELECT snowflake_floor('2020-01-01 00:00:00.0019+00')"),
            1 << 22
        );
        assert_eq!(
            one("SELECT snowflake_floor('2026-11-01 00:00:00+00')"),
            215_654_400_000 << 22
        );
    }

    #[pg_test]
    fn a_floor_range_selects_exactly_the_ids_of_its_interval() {
        Spi::run(
            "CREATE TEMP TABLE t AS
             SELECT snowflake_at(ts, 7) AS id, ts
               FROM generate_series('2026-01-01 00:00:00+00'::timestamptz,
                                    '2026-01-01 00:00:01+00', '1 ms') ts",
        )
        .unwrap();
        let mismatches = one("SELECT count(*) FROM t
              WHERE (id >= snowflake_floor('2026-01-01 00:00:00.250+00')
                     AND id < snowflake_floor('2026-01-01 00:00:00.750+00'))
                 <> (ts >= '2026-01-01 00:00:00.250+00' AND ts < '2026-01-01 00:00:00.750+00')");
        assert_eq!(mismatches, 0);
    }

    #[pg_test]
    fn at_is_deterministic_and_puts_the_uid_in_the_low_bits() {
        let id = one("SELECT snowflake_at('2026-11-01 12:00:00+00', 12345)");
        assert_eq!(
            id,
            one("SELECT snowflake_at('2026-11-01 13:00:00+01', 12345)")
        );
        assert_eq!(id & ((1 << 22) - 1), 12345);
        assert_eq!(
            id >> 22,
            one("SELECT snowflake_floor('2026-11-01 12:00:00+00')") >> 22
        );
    }

    #[pg_test]
    fn parse_gives_back_the_time_of_floor_and_at() {
        let same = Spi::get_one::<bool>(
            "SELECT (snowflake_parse(snowflake_at('2026-11-01 12:34:56.789+00', 0))).ts
                    = '2026-11-01 12:34:56.789+00'",
        );
        assert_eq!(same, Ok(Some(true)));
        let parts = Spi::get_two::<i32, i32>(
            "SELECT worker_id, sequence FROM snowflake_parse((5::bigint << 22) | (4095 << 10) | 1023)",
        );
        assert_eq!(parts, Ok((Some(1023), Some(4095))));
    }

    #[pg_test]
    fn null_in_gives_null_out() {
        for query in [
            "SELECT snowflake_floor(NULL)",
            "SELECT snowflake_at(NULL, 1)",
            "SELECT snowflake_at(now(), NULL)",
        ] {
            assert_eq!(Spi::get_one::<i64>(query), Ok(None), "{query}");
        }
        let null_row = Spi::get_one::<bool>("SELECT snowflake_parse(NULL) IS NULL");
        assert_eq!(null_row, Ok(Some(true)));
    }

    #[pg_test(error = "snowflake id -1 is negative")]
    fn a_negative_id_is_refused() {
        Spi::run("SELECT snowflake_parse(-1)").unwrap();
    }

    #[pg_test(error = "uid 4194304 is out of range")]
    fn a_uid_past_22_bits_is_refused() {
        Spi::run("SELECT snowflake_at(now(), 4194304)").unwrap();
    }

    #[pg_test(error = "snowflake ids cannot hold an infinite timestamp")]
    fn an_infinite_time_is_refused() {
        Spi::run("SELECT snowflake_floor('infinity')").unwrap();
    }

    #[pg_test(
        error = "timestamp 2019-12-31 23:59:59.999+00 is before snowflake.epoch (2020-01-01 00:00:00+00)"
    )]
    fn a_time_before_the_epoch_is_refused() {
        Spi::run("SELECT snowflake_floor('2019-12-31 23:59:59.999+00')").unwrap();
    }

    #[pg_test(
        error = "timestamp 2089-09-06 15:47:35.552+00 is past the last time snowflake ids can hold (2089-09-06 15:47:35.551+00)"
    )]
    fn a_time_past_the_41_bits_is_refused() {
        Spi::run("SELECT snowflake_floor('2089-09-06 15:47:35.552+00')").unwrap();
    }

    #[pg_test]
    fn the_labels_are_honest() {
        let labels = Spi::get_one::<String>(
            "SELECT string_agg(format('%s:%s%s%s', proname, provolatile, proparallel, proisstrict::int),
                               ' ' ORDER BY proname)
               FROM (SELECT proname, provolatile, proparallel, proisstrict FROM pg_proc
                      WHERE proname LIKE 'snowflake\\_%' ORDER BY proname, pronargs) p",
        );
        assert_eq!(
            labels,
            Ok(Some(
                "snowflake_at:ss1 snowflake_bounds:ss1 snowflake_claim_node:vu0 \
                 snowflake_compose:ss0 snowflake_convert:vu0 snowflake_decode:is1 \
                 snowflake_encode:is1 snowflake_floor:ss1 snowflake_key_holders:ss1 \
                 snowflake_layout:ss1 snowflake_next:vs0 snowflake_next:vs0 snowflake_parse:ss1 \
                 snowflake_parse:ss1 snowflake_release_node:vu1 snowflake_server_status:vs1"
                    .into()
            ))
        );
    }

    #[pg_test]
    fn a_floor_range_on_the_primary_key_uses_its_index() {
        Spi::run(
            "CREATE TEMP TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), n int);
             INSERT INTO orders (n) SELECT g FROM generate_series(1, 10000) g;
             ANALYZE orders",
        )
        .unwrap();
        let plan = Spi::get_one::<pgrx::Json>(
            "EXPLAIN (COSTS OFF, FORMAT JSON) SELECT * FROM orders
              WHERE id >= snowflake_floor(now() - interval '1 hour')
                AND id < snowflake_floor(now() - interval '59 minutes')",
        )
        .unwrap()
        .unwrap()
        .0
        .to_string();
        assert!(plan.contains("orders_pkey"), "{plan}");
    }

    #[pg_test]
    fn the_server_layout_is_the_default_one() {
        let layout = Spi::get_one::<String>("SELECT snowflake_layout()");
        assert_eq!(
            layout,
            Ok(Some("time:41, sequence:12, node:2, slot:8".into()))
        );
    }

    #[pg_test]
    fn discords_documented_id_parses_to_its_time_and_parts() {
        let row = Spi::get_one::<String>(
            "SELECT format('%s %s %s %s %s', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS'),
                           node_id, backend_slot, sequence, gene)
               FROM snowflake_parse(175928847299117063, 'discord')",
        );
        assert_eq!(row, Ok(Some("2016-04-30 11:18:25.796 1 0 7 0".into())));
    }

    #[pg_test]
    fn seed_004s_gene_example_parses_under_its_spec() {
        let row = Spi::get_one::<String>(
            "SELECT format('%s %s %s %s', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),
                           node_id, sequence, gene)
               FROM snowflake_parse(6593741087309889548,
                                    'time:41, node:6, sequence:12, gene:4, epoch:1970-01-01T00:00:00Z')",
        );
        assert_eq!(row, Ok(Some("2019-10-26 06:13:01 1 0 12".into())));
    }

    /// compose(parse(x)) = x, over random ids of every preset that parses them.
    #[pg_test]
    fn compose_inverts_parse_under_every_preset() {
        for preset in [
            "default",
            "worker-first",
            "js53",
            "twitter",
            "discord",
            "instagram",
            "sonyflake",
        ] {
            let bits = if preset == "js53" { 53 } else { 63 };
            let mismatches = one(&format!(
                "SELECT count(*) FILTER (WHERE snowflake_compose(p.ts, p.node_id, p.backend_slot,
                                         p.sequence, p.gene, '{preset}') <> id)
                   FROM (SELECT (random() * (2 ^ {bits} - 1))::bigint AS id
                           FROM generate_series(1, 20000)) ids,
                        LATERAL snowflake_parse(id, '{preset}') p"
            ));
            assert_eq!(mismatches, 0, "{preset}");
        }
        let server = one(
            "SELECT snowflake_compose(p.ts, p.node_id, p.backend_slot, p.sequence)
                            FROM snowflake_parse(912413252820934656) p",
        );
        assert_eq!(server, 912_413_252_820_934_656);
    }

    #[pg_test(error = "this server's layout has no gene bits")]
    fn a_gene_on_a_layout_without_gene_bits_is_refused() {
        Spi::run("SELECT snowflake_next(42)").unwrap();
    }

    #[pg_test(error = "node 4 does not fit the layout: it goes from 0 to 3")]
    fn compose_refuses_a_part_that_does_not_fit() {
        Spi::run("SELECT snowflake_compose(now(), 4, 0, 0)").unwrap();
    }

    #[pg_test]
    fn the_first_id_of_a_node_id_claims_it_for_this_server() {
        Spi::run("SET snowflake.node_id = 1").unwrap();
        one("SELECT snowflake_next()");
        let claims = one("SELECT count(*) FROM snowflake_nodes WHERE node_id = 1
               AND system_identifier = (SELECT system_identifier FROM pg_control_system())
               AND layout = snowflake_layout()");
        assert_eq!(claims, 1);
    }

    #[pg_test(error = "node id 2 is claimed by another server")]
    fn another_servers_claim_refuses_the_node_id() {
        Spi::run(
            "INSERT INTO snowflake_nodes VALUES
               (2, 42, 'elsewhere', snowflake_layout(), '2020-01-01 00:00:00+00', now())",
        )
        .unwrap();
        Spi::run("SET snowflake.node_id = 2").unwrap();
        Spi::run("SELECT snowflake_next()").unwrap();
    }

    #[pg_test(error = "this server's layout or epoch differs from that of node 3")]
    fn another_servers_layout_refuses_every_node_id() {
        Spi::run(
            "INSERT INTO snowflake_nodes VALUES
               (3, 43, 'elsewhere', 'time:41, node:5, slot:5, sequence:12',
                '2020-01-01 00:00:00+00', now())",
        )
        .unwrap();
        Spi::run("SET snowflake.node_id = 1").unwrap();
        Spi::run("SELECT snowflake_next()").unwrap();
    }

    #[pg_test]
    fn every_sql_function_of_the_extension_resolves_names_in_pg_catalog_alone() {
        let loose = Spi::get_one::<String>(
            "SELECT string_agg(p.proname || ' ' || coalesce(p.proconfig::text, 'no search_path'), ', ')
               FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
               JOIN pg_language l ON l.oid = p.prolang
              WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake_pg')
                AND l.lanname IN ('sql', 'plpgsql')
                AND p.proconfig IS DISTINCT FROM '{\"search_path=pg_catalog, pg_temp\"}'",
        );
        assert_eq!(loose, Ok(None));
    }

    #[pg_test]
    fn a_claim_uses_no_function_or_operator_of_the_callers_search_path() {
        Spi::run(
            "CREATE SCHEMA shadow;
             CREATE FUNCTION shadow.trap() RETURNS boolean LANGUAGE plpgsql AS
               $$BEGIN RAISE EXCEPTION 'a shadowing object ran'; END$$;
             CREATE FUNCTION shadow.format(text, name) RETURNS text LANGUAGE sql AS
               $$SELECT CASE WHEN shadow.trap() THEN $1 END$$;
             CREATE FUNCTION shadow.quote_ident(text) RETURNS text LANGUAGE sql AS
               $$SELECT CASE WHEN shadow.trap() THEN $1 END$$;
             CREATE FUNCTION shadow.name_eq(name, name) RETURNS boolean LANGUAGE sql AS
               $$SELECT shadow.trap()$$;
             CREATE OPERATOR shadow.= (LEFTARG = name, RIGHTARG = name, FUNCTION = shadow.name_eq);
             CREATE FUNCTION shadow.int_ne(integer, integer) RETURNS boolean LANGUAGE sql AS
               $$SELECT shadow.trap()$$;
             CREATE OPERATOR shadow.<> (LEFTARG = integer, RIGHTARG = integer, FUNCTION = shadow.int_ne);
             SET search_path = shadow, public, pg_catalog;
             SET snowflake.node_id = 2",
        )
        .unwrap();
        one("SELECT public.snowflake_next()");
        let claims = one(
            "SELECT count(*) FROM public.snowflake_nodes n WHERE n.node_id OPERATOR(pg_catalog.=) 2",
        );
        assert_eq!(claims, 1);
    }

    #[pg_test]
    fn the_status_view_tells_the_node_its_source_and_the_layout() {
        Spi::run("SET snowflake.node_id = 3").unwrap();
        let (node_id, source) =
            Spi::get_two::<i32, String>("SELECT node_id, node_source FROM snowflake_status")
                .unwrap();
        assert_eq!((node_id, source.as_deref()), (Some(3), Some("setting")));
        let layout = Spi::get_one::<String>("SELECT layout FROM snowflake_status").unwrap();
        assert_eq!(
            layout.as_deref(),
            Some("time:41, sequence:12, node:2, slot:8")
        );
    }

    #[pg_test]
    fn the_status_view_tells_when_the_epoch_ends_and_what_is_used_of_it() {
        // The default layout's 41 bits of ms from 2020: the first ms past the last id's.
        let ends = Spi::get_one::<bool>(
            "SELECT epoch_ends = '2089-09-06 15:47:35.552+00' AND epoch_used > 0 AND epoch_used < 1
                    AND abs(epoch_used - extract(epoch FROM clock_timestamp() - epoch)
                                         / extract(epoch FROM epoch_ends - epoch)) < 1e-6
               FROM snowflake_status",
        )
        .unwrap();
        assert_eq!(ends, Some(true));
        // Without preload (as here) the mark and its renewals are the server's: unknown.
        let renewals = Spi::get_one::<bool>(
            "SELECT high_water_mark_renewed IS NULL AND high_water_mark_renewals_failed IS NULL
               FROM snowflake_status",
        )
        .unwrap();
        assert_eq!(renewals, Some(true));
    }

    #[pg_test]
    fn the_status_view_tells_a_node_id_claimed_by_another_server() {
        Spi::run("SET snowflake.node_id = 1").unwrap();
        let claimed = || {
            Spi::get_two::<bool, bool>(
                "SELECT node_claimed, node_claimed_by_other FROM snowflake_status",
            )
            .unwrap()
        };
        assert_eq!(claimed(), (Some(false), Some(false)));
        Spi::run(
            "INSERT INTO snowflake_nodes (node_id, system_identifier, server, layout, epoch)
             SELECT node_id, system_identifier + 1, 'another server', layout, epoch
               FROM snowflake_status",
        )
        .unwrap();
        assert_eq!(claimed(), (Some(false), Some(true)));
    }

    #[pg_test]
    fn text_forms_round_trip_and_sort_as_the_ids() {
        let wrong = one(
            "SELECT count(*) FROM (VALUES (0::bigint), (1), (9223372036854775807), (912414338541690884)) v(id)
             WHERE snowflake_decode(snowflake_encode(id)) <> id
                OR snowflake_decode(snowflake_encode(id, 'base62'), 'base62') <> id",
        );
        assert_eq!(wrong, 0);
        let out_of_order = one(
            "SELECT count(*) FROM (SELECT snowflake_encode(id) COLLATE \"C\" AS text,
                    lag(snowflake_encode(id)) OVER (ORDER BY id) COLLATE \"C\" AS before
                  FROM (SELECT snowflake_next() AS id FROM generate_series(1, 1000)) ids) t
             WHERE before >= text",
        );
        assert_eq!(out_of_order, 0);
    }
}
