//! Stable ids and hashes. Ids are derived from content, never from build
//! order or time, so two builds of the same tree agree.

use sha2::{Digest, Sha256};

/// Hex sha256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A positive i64 id from the sha256 of the parts (separated by NUL).
pub fn stable_id(parts: &[&[u8]]) -> i64 {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
        h.update([0u8]);
    }
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    (u64::from_le_bytes(b) & 0x7fff_ffff_ffff_ffff) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_positive() {
        let a = stable_id(&[b"a", b"b"]);
        assert_eq!(a, stable_id(&[b"a", b"b"]));
        assert_ne!(a, stable_id(&[b"ab"]));
        assert!(a >= 0);
    }
}
