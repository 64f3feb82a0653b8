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
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor.trim())
        .map_err(|_| bad("not a cursor this server issued"))?;
    let raw: Raw =
        serde_json::from_slice(&bytes).map_err(|_| bad("not a cursor this server issued"))?;
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
    }
}
