//! The WAL record of a reservation: the time, in ms since 1970-01-01 UTC, up to which the
//! server may have minted, as eight little-endian bytes. In ms rather than ticks, like the
//! mark's file, so that it means the same to a standby whatever layout it reads it with.

/// The size of a record's data.
pub const SIZE: usize = 8;

/// The record's data for a reservation up to `unix_ms`.
pub fn encode(unix_ms: i64) -> [u8; SIZE] {
    unix_ms.to_le_bytes()
}

/// The reservation a record's data holds; the reason when it holds none.
pub fn decode(data: &[u8]) -> Result<i64, String> {
    let bytes: [u8; SIZE] = data
        .try_into()
        .map_err(|_| format!("{} bytes of data, not {SIZE}", data.len()))?;
    match i64::from_le_bytes(bytes) {
        unix_ms if unix_ms >= 0 => Ok(unix_ms),
        unix_ms => Err(format!("a time before 1970 ({unix_ms} ms)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_anything_else_is_refused() {
        assert_eq!(decode(&encode(1_795_000_000_123)), Ok(1_795_000_000_123));
        assert_eq!(decode(&encode(0)), Ok(0));
        assert!(decode(&encode(-1)).is_err());
        assert!(decode(&[0; 7]).is_err());
        assert!(decode(&[0; 9]).is_err());
    }
}
