//! Layouts from text: a preset name, or a spec naming the fields from the high end down,
//! such as `time:41, sequence:12, node:2, slot:8` or `time:37/10ms, sequence:6, node:2,
//! slot:8`. In a per-call layout an `epoch:<ISO 8601>` entry may follow the fields.

use crate::layout::{Field, Layout, LayoutError, Unit, MAX_FIELD_BITS};

/// The presets: ours, and those of other systems, with their epochs, for parsing their ids.
/// Where another system's time field is wider than ours, its top bits are 0 until the
/// dates given: Discord's 42 bits until 2084, Instagram's 41 (the sign bit included) until 2046.
pub const PRESETS: [(&str, &str); 7] = [
    // The sequence right below the time, following the clock inside the ms: the ids of
    // every backend sort by their minting time (`generator.rs`).
    ("default", "time:41, sequence:12, node:2, slot:8"),
    // 0.3.0's default, in Twitter's field order: each backend's ids of one ms are a block.
    ("worker-first", "time:41, node:2, slot:8, sequence:12"),
    // Every id at most 2^53 - 1 until 2063 with the default epoch (2^37 ticks of 10 ms
    // are 43.5 years); 256 slots on 4 nodes; 64 ids per 10 ms per backend.
    ("js53", "time:37/10ms, sequence:6, node:2, slot:8"),
    // Datacenter and worker.
    (
        "twitter",
        "time:41, node:5, slot:5, sequence:12, epoch:2010-11-04T01:42:54.657Z",
    ),
    // Internal worker and process.
    (
        "discord",
        "time:41, node:5, slot:5, sequence:12, epoch:2015-01-01T00:00:00Z",
    ),
    // Logical shard.
    (
        "instagram",
        "time:40, node:13, sequence:10, epoch:2011-08-24T21:07:01.721Z",
    ),
    // Machine id, below the sequence.
    (
        "sonyflake",
        "time:39/10ms, sequence:8, node:16, epoch:2014-09-01T00:00:00Z",
    ),
];

/// A layout read from text, and the epoch it names, if any (still to be parsed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub layout: Layout,
    pub epoch: Option<String>,
}

/// Reads a preset name or a spec.
pub fn parse(text: &str) -> Result<Spec, LayoutError> {
    let trimmed = text.trim();
    let spec = PRESETS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(trimmed))
        .map_or(trimmed, |&(_, spec)| spec);
    parse_spec(spec).map_err(|reason| LayoutError::InvalidLayout {
        value: text.into(),
        reason,
    })
}

fn parse_spec(spec: &str) -> Result<Spec, String> {
    let mut fields: Vec<(Field, u32)> = vec![];
    let mut unit = Unit::Ms;
    let mut epoch = None;
    if !spec.contains([',', ':']) {
        return Err(format!("no preset is named \"{}\"", spec.trim()));
    }
    for entry in spec.split(',').map(str::trim) {
        if epoch.is_some() {
            return Err("the epoch must be the last entry".into());
        }
        let (name, value) = entry
            .split_once(':')
            .map(|(name, value)| (name.trim(), value.trim()))
            .ok_or_else(|| format!("\"{entry}\" is not a name:width entry"))?;
        if name == "epoch" {
            epoch = Some(value.to_string());
            continue;
        }
        let field = Field::ALL
            .into_iter()
            .find(|field| field.name() == name)
            .ok_or_else(|| format!("unknown field \"{name}\""))?;
        if fields.iter().any(|&(seen, _)| seen == field) {
            return Err(format!("the field \"{name}\" appears twice"));
        }
        if fields.last().is_some_and(|&(last, _)| last == Field::Gene) {
            return Err("\"gene\" must be the last field".into());
        }
        if (field == Field::Time) != fields.is_empty() {
            return Err("\"time\" must be the first field".into());
        }
        let width = match value.split_once('/') {
            Some((width, unit_name)) if field == Field::Time => {
                unit = parse_unit(unit_name.trim())?;
                width.trim()
            }
            Some(_) => return Err(format!("only \"time\" has a unit, not \"{name}\"")),
            None => value,
        };
        let width: u32 = width
            .parse()
            .map_err(|_| format!("the width of \"{name}\" is not a number: \"{width}\""))?;
        let widest = if field == Field::Time {
            63
        } else {
            MAX_FIELD_BITS
        };
        let narrowest = u32::from(field == Field::Time);
        if !(narrowest..=widest).contains(&width) {
            return Err(format!(
                "\"{name}\" has {width} bits; it takes {narrowest} to {widest}"
            ));
        }
        fields.push((field, width));
    }
    if fields.is_empty() {
        return Err("it names no fields; \"time\" comes first".into());
    }
    let total: u32 = fields.iter().map(|&(_, width)| width).sum();
    if total != 63 && total != 53 {
        return Err(format!(
            "the widths add up to {total}; they must add up to 63 (or 53, for ids a JavaScript number holds exactly)"
        ));
    }
    Ok(Spec {
        layout: Layout::new(&fields, unit),
        epoch,
    })
}

fn parse_unit(name: &str) -> Result<Unit, String> {
    [Unit::Ms, Unit::TenMs, Unit::Second]
        .into_iter()
        .find(|unit| unit.name() == name)
        .ok_or_else(|| format!("unknown time unit \"{name}\"; use 1ms, 10ms or 1s"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Parts;

    fn reason(text: &str) -> String {
        match parse(text) {
            Err(LayoutError::InvalidLayout { value, reason }) => {
                assert_eq!(value, text);
                reason
            }
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn presets_and_their_specs_read_alike() {
        for (name, spec) in PRESETS {
            let preset = parse(name).unwrap();
            assert_eq!(preset, parse(spec).unwrap(), "{name}");
            assert_eq!(parse(&name.to_uppercase()).unwrap(), preset);
            let printed = preset.layout.to_string();
            assert!(spec.starts_with(&printed), "{name}: {printed}");
        }
        let default = parse("default").unwrap();
        assert_eq!(
            default.layout.to_string(),
            Layout::from_node_bits(2).unwrap().to_string()
        );
        assert_eq!(default.epoch, None);
    }

    #[test]
    fn spaces_are_optional_and_units_are_read() {
        let tight = parse("time:39/10ms,sequence:8,node:16").unwrap();
        let loose = parse("  time : 39 / 10ms ,  sequence: 8, node :16 ").unwrap();
        assert_eq!(tight, loose);
        assert_eq!(tight.layout.unit(), Unit::TenMs);
        assert_eq!(
            tight.layout.to_string(),
            "time:39/10ms, sequence:8, node:16"
        );
        assert_eq!(
            parse("time:31/1s, node:10, slot:10, sequence:12")
                .unwrap()
                .layout
                .unit(),
            Unit::Second
        );
        assert_eq!(parse("time:63/1ms").unwrap().layout.max_ticks(), i64::MAX);
        assert!(parse("time:20, node:31, sequence:12").is_ok());
        let with_epoch =
            parse("time:41, node:6, sequence:12, gene:4, epoch:1970-01-01T00:00:00Z").unwrap();
        assert_eq!(with_epoch.epoch.as_deref(), Some("1970-01-01T00:00:00Z"));
    }

    #[test]
    fn bad_layouts_say_what_is_wrong() {
        for (text, expected) in [
            ("", "no preset is named \"\""),
            ("fancy", "no preset is named \"fancy\""),
            ("time:41, fancy", "\"fancy\" is not a name:width entry"),
            ("time:41, node:2, slot:8, sequence:11", "the widths add up to 62; they must add up to 63 (or 53, for ids a JavaScript number holds exactly)"),
            ("time:41, node:2, slot:8, sequence:13", "the widths add up to 64; they must add up to 63 (or 53, for ids a JavaScript number holds exactly)"),
            ("time:41, worker:10, sequence:12", "unknown field \"worker\""),
            ("time:41, node:2, node:8, sequence:12", "the field \"node\" appears twice"),
            ("node:10, time:41, sequence:12", "\"time\" must be the first field"),
            ("time:41, node:2, time:8, sequence:12", "the field \"time\" appears twice"),
            ("time:41, gene:4, node:6, sequence:12", "\"gene\" must be the last field"),
            ("time:41/2ms, node:10, sequence:12", "unknown time unit \"2ms\"; use 1ms, 10ms or 1s"),
            ("time:41, node:10/1s, sequence:12", "only \"time\" has a unit, not \"node\""),
            ("time:41, node:ten, sequence:12", "the width of \"node\" is not a number: \"ten\""),
            ("time:41, node:-1, sequence:12", "the width of \"node\" is not a number: \"-1\""),
            ("time:0, node:31, slot:20, sequence:12", "\"time\" has 0 bits; it takes 1 to 63"),
            ("time:10, node:32, slot:21", "\"node\" has 32 bits; it takes 0 to 31"),
            ("time:41, node:10, sequence:12,", "\"\" is not a name:width entry"),
            ("time:41, node:10, sequence:12, epoch:2020-01-01, gene:0", "the epoch must be the last entry"),
        ] {
            assert_eq!(reason(text), expected, "{text}");
        }
    }

    #[test]
    fn seed_004s_gene_example_parses_to_its_parts() {
        let spec =
            parse("time:41, node:6, sequence:12, gene:4, epoch:1970-01-01T00:00:00Z").unwrap();
        let parts = spec.layout.decompose(6_593_741_087_309_889_548).unwrap();
        assert_eq!(
            parts,
            Parts {
                ticks: 1_572_070_381_000,
                node_id: 1,
                backend_slot: 0,
                worker_id: 1,
                sequence: 0,
                gene: 12,
            }
        );
        // 1820 and 5177331 are user ids: their orders' ids end in their low 4 bits.
        assert_eq!(1820 & 15, 12);
        assert_eq!(
            spec.layout.compose(&Parts {
                gene: 5_177_331 & 15,
                ..parts
            }),
            Ok(6_593_741_087_309_889_539)
        );
    }

    #[test]
    fn discords_documented_id_parses_to_its_parts() {
        let discord = parse("discord").unwrap();
        let parts = discord.layout.decompose(175_928_847_299_117_063).unwrap();
        // 2016-04-30 11:18:25.796 UTC is 41,944,705,796 ms after 2015-01-01.
        assert_eq!(parts.ticks, 41_944_705_796);
        assert_eq!(
            (parts.node_id, parts.backend_slot, parts.sequence),
            (1, 0, 7)
        );
        assert_eq!(discord.epoch.as_deref(), Some("2015-01-01T00:00:00Z"));
    }
}
