//! The file of the high-water mark: a comment line and the time, in ms since 1970-01-01
//! UTC, after which no id was minted. Written whole (a temporary file, fsynced, renamed
//! over the old one, the directory fsynced), so that a crash leaves the old mark or the
//! new one, never half of either.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

const HEADER: &str =
    "# snowflake_pg high-water mark: no id was minted after this time (ms since 1970-01-01 UTC)";

/// The mark in the file, `None` when there is no file; the reason when it cannot be read.
pub fn read(path: &Path) -> Result<Option<i64>, String> {
    match fs::read_to_string(path) {
        Ok(text) => parse(&text).map(Some),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// Writes `unix_ms` durably, creating the directory if needed; the reason when it fails.
pub fn write(path: &Path, unix_ms: i64) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temporary = path.with_extension("tmp");
    let written = (|| {
        fs::create_dir_all(dir)?;
        let mut file = File::create(&temporary)?;
        file.write_all(format(unix_ms).as_bytes())?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        File::open(dir)?.sync_all()
    })();
    written.map_err(|error| error.to_string())
}

fn format(unix_ms: i64) -> String {
    format!("{HEADER}\n{unix_ms}\n")
}

fn parse(text: &str) -> Result<i64, String> {
    let mut lines = text.lines().filter(|line| !line.starts_with('#'));
    match (
        lines.next().map(|line| line.trim().parse::<i64>()),
        lines.next(),
    ) {
        (Some(Ok(unix_ms)), None) if unix_ms >= 0 => Ok(unix_ms),
        _ => Err("it does not hold one time in ms since 1970".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_mark_reads_back_and_no_file_is_no_mark() {
        let dir = std::env::temp_dir().join(format!("snowflake_pg-mark-{}", std::process::id()));
        let path = dir.join("sub").join("high_water_mark");
        assert_eq!(read(&path), Ok(None));
        write(&path, 1_795_000_000_123).unwrap();
        assert_eq!(read(&path), Ok(Some(1_795_000_000_123)));
        write(&path, 1_795_000_000_456).unwrap();
        assert_eq!(read(&path), Ok(Some(1_795_000_000_456)));
        assert!(!path.with_extension("tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn anything_but_one_time_is_refused() {
        assert_eq!(parse(&format(42)), Ok(42));
        assert_eq!(parse("42"), Ok(42));
        for bad in [
            "",
            "# only a comment\n",
            "yesterday\n",
            "-5\n",
            "1\n2\n",
            "1.5\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_directory_that_cannot_be_written_is_an_error_with_the_reason() {
        // A path under a regular file cannot be created, whoever runs the test.
        let blocker =
            std::env::temp_dir().join(format!("snowflake_pg-blocker-{}", std::process::id()));
        fs::write(&blocker, "").unwrap();
        let reason = write(&blocker.join("high_water_mark"), 1).unwrap_err();
        assert!(!reason.is_empty());
        fs::remove_file(&blocker).unwrap();
    }
}
