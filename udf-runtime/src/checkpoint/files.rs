//! The files of a checkpoint. Each is `magic · length · crc32 · payload`, written to a
//! temporary name, synced and renamed into place, so a file either reads whole with its
//! checksum or is known to be broken — a crash mid-write or a truncated copy never passes
//! for state.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use datafusion::common::{DataFusionError, Result};

const MAGIC: &[u8; 8] = b"UDFCKPT1";
pub const HEADER: usize = 8 + 8 + 4;

/// Writes `payload` to `path` atomically and durably.
pub fn write(path: &Path, payload: &[u8]) -> Result<()> {
    let failed = |e: std::io::Error| {
        DataFusionError::Execution(format!(
            "checkpoint file {} could not be written: {e}",
            path.display()
        ))
    };
    let temporary = path.with_extension("in-progress");
    let mut file = File::create(&temporary).map_err(failed)?;
    file.write_all(MAGIC).map_err(failed)?;
    file.write_all(&(payload.len() as u64).to_le_bytes())
        .map_err(failed)?;
    file.write_all(&crc32(payload).to_le_bytes())
        .map_err(failed)?;
    file.write_all(payload).map_err(failed)?;
    file.sync_all().map_err(failed)?;
    drop(file);
    fs::rename(&temporary, path).map_err(failed)?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

/// The payload of a file [`write`] wrote; an error naming the file if it is missing,
/// truncated or altered.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    let broken = |what: &str| {
        DataFusionError::Execution(format!("checkpoint file {} {what}", path.display()))
    };
    let bytes = fs::read(path).map_err(|e| broken(&format!("does not read: {e}")))?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(broken(
            "is not a checkpoint file (truncated or overwritten)",
        ));
    }
    let length = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let checksum = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != length {
        return Err(broken(&format!(
            "is truncated: {} of {length} bytes",
            payload.len()
        )));
    }
    if crc32(payload) != checksum {
        return Err(broken("is corrupted: its checksum does not match"));
    }
    Ok(payload.to_vec())
}

/// Makes a rename or a new file in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| {
        DataFusionError::Execution(format!(
            "checkpoint directory {} could not be synced: {e}",
            dir.display()
        ))
    })
}

/// CRC-32 (IEEE), bitwise over a table built once.
pub fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (n, entry) in table.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *entry = c;
        }
        table
    });
    let mut crc = !0u32;
    for &byte in bytes {
        crc = table[((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_ieee_checksum() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn a_written_file_reads_back_and_a_damaged_one_is_named() {
        let dir = std::env::temp_dir().join(format!("udf-ckpt-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state");
        write(&path, b"every key's state").unwrap();
        assert_eq!(read(&path).unwrap(), b"every key's state");
        assert!(!path.with_extension("in-progress").exists());

        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("is truncated: 14 of 17 bytes"), "{error}");

        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        fs::write(&path, &flipped).unwrap();
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("checksum does not match"), "{error}");

        fs::write(&path, b"UDF").unwrap();
        assert!(
            read(&path)
                .unwrap_err()
                .to_string()
                .contains("not a checkpoint file")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
