//! Opaque pagination cursors: they encode the query's fingerprint, the
//! snapshot ids and a position, so a cursor from another query or snapshot
//! (or a garbled one) is refused with `INVALID_CURSOR`.

use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{codes, ToolError};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct Raw {
    /// Fingerprint of the normalized query and the snapshot ids.
    q: String,
    /// Position: tool-specific numbers (e.g. file index, match index).
    p: Vec<u64>,
    /// Check of `q` and `p` (unkeyed: it catches a cursor edited or cut
    /// by mistake, not a deliberate forgery; positions are bounded anyway).
    #[serde(default)]
    k: String,
}

/// Longest cursor accepted, in bytes.
pub const MAX_CURSOR_BYTES: usize = 1024;
/// Most numbers in a position, and the largest.
const MAX_POSITION_LEN: usize = 8;
const MAX_POSITION: u64 = 1 << 48;

fn check(q: &str, p: &[u64]) -> String {
    let mut h = Sha256::new();
    h.update(b"code-index cursor\0");
    h.update(q.as_bytes());
    for x in p {
        h.update(x.to_le_bytes());
    }
    hex::encode(&h.finalize()[..6])
}

/// Fingerprint of a normalized query over a set of snapshots.
pub fn fingerprint(tool: &str, normalized_query: &str, snapshot_ids: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0]);
    h.update(normalized_query.as_bytes());
    for s in snapshot_ids {
        h.update([0]);
        h.update(s.as_bytes());
    }
    hex::encode(&h.finalize()[..12])
}

pub fn encode(fingerprint: &str, position: &[u64]) -> String {
    let raw = Raw {
        q: fingerprint.to_string(),
        p: position.to_vec(),
        k: check(fingerprint, position),
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&raw).expect("cursor serializes"))
}

/// The position in `cursor`, if it was made for this fingerprint.
pub fn decode(cursor: &str, fingerprint: &str) -> Result<Vec<u64>, ToolError> {
    let bad = |why: &str| {
        ToolError::new(
            codes::INVALID_CURSOR,
            format!("invalid cursor: {why}"),
            "pass the next_cursor returned by the same tool with the same arguments, or drop `cursor` to start from the first page",
        )
    };
    if cursor.len() > MAX_CURSOR_BYTES {
        return Err(bad("longer than any cursor this server issues"));
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor.trim())
        .map_err(|_| bad("not a cursor this server issued"))?;
    let raw: Raw =
        serde_json::from_slice(&bytes).map_err(|_| bad("not a cursor this server issued"))?;
    if raw.k != check(&raw.q, &raw.p)
        || raw.p.len() > MAX_POSITION_LEN
        || raw.p.iter().any(|&x| x > MAX_POSITION)
    {
        return Err(bad("it was altered or cut short"));
    }
    if raw.q != fingerprint {
        return Err(bad("it belongs to another query or to another snapshot"));
    }
    Ok(raw.p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let f = fingerprint("grep", "pattern=x", &["abc"]);
        let c = encode(&f, &[3, 7]);
        assert_eq!(decode(&c, &f).unwrap(), vec![3, 7]);
        let other = fingerprint("grep", "pattern=y", &["abc"]);
        assert_eq!(decode(&c, &other).unwrap_err().code, codes::INVALID_CURSOR);
        assert_eq!(
            decode("garbage!!", &f).unwrap_err().code,
            codes::INVALID_CURSOR
        );
        let other_snap = fingerprint("grep", "pattern=x", &["abd"]);
        assert!(decode(&c, &other_snap).is_err());
        // An edited position is refused.
        let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&Raw {
                q: f.clone(),
                p: vec![u64::MAX, 0],
                k: check(&f, &[3, 7]),
            })
            .unwrap(),
        );
        let e = decode(&forged, &f).unwrap_err();
        assert!(e.message.contains("altered"), "{e}");
        assert!(decode(&"A".repeat(MAX_CURSOR_BYTES + 1), &f).is_err());
    }

    #[test]
    fn fuzz_cursor() {
        use code_index_schemas::fuzz;
        use proptest::prelude::*;
        let f = fingerprint("grep", "pattern=x", &["abc"]);
        // Any text: refused or decoded, never a panic.
        fuzz::run("cursor_text", any::<String>(), |c| {
            let _ = decode(&c, &f);
            Ok(())
        });
        // Any bytes, base64-encoded as a cursor is.
        fuzz::run(
            "cursor_bytes",
            prop::collection::vec(any::<u8>(), 0..300),
            |b| {
                let c = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
                let _ = decode(&c, &f);
                Ok(())
            },
        );
        // Round trip, and any one-character edit is refused or changes nothing.
        fuzz::run(
            "cursor_edit",
            (
                prop::collection::vec(0u64..1 << 40, 0..4),
                any::<prop::sample::Index>(),
                any::<char>(),
            ),
            |(p, at, ch)| {
                let c = encode(&f, &p);
                prop_assert_eq!(decode(&c, &f).unwrap(), p.clone());
                let mut chars: Vec<char> = c.chars().collect();
                let i = at.index(chars.len());
                chars[i] = ch;
                let edited: String = chars.into_iter().collect();
                if let Ok(q) = decode(&edited, &f) {
                    prop_assert_eq!(q, p);
                }
                Ok(())
            },
        );
    }
}
