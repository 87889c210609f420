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

/// CRC-32 (IEEE), eight bytes a step over tables built once ("slicing by 8": table `k`
/// gives a byte's effect `k` bytes further on, so eight lookups replace eight dependent
/// steps; a checkpoint's megabytes are summed on the processors' cores).
pub fn crc32(bytes: &[u8]) -> u32 {
    static TABLES: std::sync::OnceLock<[[u32; 256]; 8]> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let mut tables = [[0u32; 256]; 8];
        for (n, entry) in tables[0].iter_mut().enumerate() {
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
        for k in 1..8 {
            for n in 0..256 {
                let previous = tables[k - 1][n];
                tables[k][n] = (previous >> 8) ^ tables[0][(previous & 0xff) as usize];
            }
        }
        tables
    });
    let byte =
        |crc: u32, byte: u8| tables[0][((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    let mut crc = !0u32;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let low = crc ^ u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let high = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]);
        crc = tables[7][(low & 0xff) as usize]
            ^ tables[6][((low >> 8) & 0xff) as usize]
            ^ tables[5][((low >> 16) & 0xff) as usize]
            ^ tables[4][(low >> 24) as usize]
            ^ tables[3][(high & 0xff) as usize]
            ^ tables[2][((high >> 8) & 0xff) as usize]
            ^ tables[1][((high >> 16) & 0xff) as usize]
            ^ tables[0][(high >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = byte(crc, b);
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
        // Eight bytes a step agree with one bit a step, at every length and offset.
        let bitwise = |bytes: &[u8]| {
            let mut crc = !0u32;
            for &byte in bytes {
                crc ^= u32::from(byte);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        0xEDB8_8320 ^ (crc >> 1)
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        };
        let bytes: Vec<u8> = (0u32..100)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..9 {
            for end in start..bytes.len() {
                assert_eq!(crc32(&bytes[start..end]), bitwise(&bytes[start..end]));
            }
        }
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
