//! Signed snapshots: an ed25519 signature over the exact bytes of
//! `manifest.json`, kept beside it in `manifest.sig`. The manifest lists
//! every file's size and sha256, so a valid signature vouches for every
//! table; readers check those hashes anyway.
//!
//! - secret key: base64 of the PKCS#8 document `code-indexer keygen` writes
//!   (kept as a CI secret, `CODE_INDEX_SIGNING_KEY`);
//! - public key: `ed25519:<base64 of the 32 bytes>` (given to `serve
//!   --trust-key` or `CODE_INDEX_TRUSTED_KEYS`);
//! - `manifest.sig`: JSON `{"algorithm": "ed25519", "key_id": …, "signature": …}`,
//!   `key_id` the first 16 hex digits of the public key's sha256.

use base64::Engine;
use ring::signature::{Ed25519KeyPair, KeyPair, UnparsedPublicKey, ED25519};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diag::Diagnostic;

/// The signature file beside `manifest.json`.
pub const SIGNATURE_FILE: &str = "manifest.sig";
const PREFIX: &str = "ed25519:";
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A signing or verification failure: a stable code and what to do.
pub type SignError = Diagnostic;

pub mod codes {
    use crate::diag::Code;
    /// A key that is not ours to read: not base64, not an ed25519 key.
    pub const BAD_KEY: Code = Code::SigningKey;
    /// A trusted key is configured and the snapshot has no `manifest.sig`.
    pub const MISSING: Code = Code::SignatureMissing;
    /// The signature does not verify: the manifest was changed or the file is damaged.
    pub const INVALID: Code = Code::SignatureInvalid;
    /// A valid signature by a key that is not trusted.
    pub const UNTRUSTED: Code = Code::SignatureUntrusted;
}

/// The `manifest.sig` body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Signature {
    pub algorithm: String,
    pub key_id: String,
    pub signature: String,
}

/// A public key to verify with.
#[derive(Debug, Clone, PartialEq)]
pub struct PublicKey {
    bytes: Vec<u8>,
}

impl PublicKey {
    /// Parse `ed25519:<base64>`.
    pub fn parse(s: &str) -> Result<PublicKey, SignError> {
        let bad = || {
            SignError::new(
                codes::BAD_KEY,
                format!("{:?} is not a code-index public key", clip(s)),
                "pass the public key `code-indexer keygen` printed: ed25519:<base64>",
            )
        };
        let b = s.trim().strip_prefix(PREFIX).ok_or_else(bad)?;
        let bytes = B64.decode(b).map_err(|_| bad())?;
        if bytes.len() != 32 {
            return Err(bad());
        }
        Ok(PublicKey { bytes })
    }

    pub fn key_id(&self) -> String {
        hex::encode(&Sha256::digest(&self.bytes)[..8])
    }
}

impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PREFIX}{}", B64.encode(&self.bytes))
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// A new key pair: (secret key as base64 PKCS#8, public key).
pub fn generate() -> Result<(String, PublicKey), SignError> {
    let rng = ring::rand::SystemRandom::new();
    let doc = Ed25519KeyPair::generate_pkcs8(&rng)
        .map_err(|_| SignError::new(codes::BAD_KEY, "cannot generate a key", "retry"))?;
    let pair = Ed25519KeyPair::from_pkcs8(doc.as_ref())
        .map_err(|_| SignError::new(codes::BAD_KEY, "cannot read the generated key", "retry"))?;
    let public = PublicKey {
        bytes: pair.public_key().as_ref().to_vec(),
    };
    Ok((B64.encode(doc.as_ref()), public))
}

fn key_pair(secret: &str) -> Result<Ed25519KeyPair, SignError> {
    let bad = |why: &str| {
        SignError::new(
            codes::BAD_KEY,
            format!("the signing key {why}"),
            "pass the secret key file `code-indexer keygen` wrote (its content, base64), e.g. from a CI secret",
        )
    };
    let doc = B64
        .decode(secret.trim())
        .map_err(|_| bad("is not base64"))?;
    Ed25519KeyPair::from_pkcs8(&doc).map_err(|_| bad("is not an ed25519 PKCS#8 key"))
}

/// The public key of a secret key.
pub fn public_of(secret: &str) -> Result<PublicKey, SignError> {
    Ok(PublicKey {
        bytes: key_pair(secret)?.public_key().as_ref().to_vec(),
    })
}

/// Sign the bytes of a manifest: the `manifest.sig` body.
pub fn sign(secret: &str, manifest: &[u8]) -> Result<Signature, SignError> {
    let pair = key_pair(secret)?;
    let public = PublicKey {
        bytes: pair.public_key().as_ref().to_vec(),
    };
    Ok(Signature {
        algorithm: "ed25519".into(),
        key_id: public.key_id(),
        signature: B64.encode(pair.sign(manifest).as_ref()),
    })
}

/// The trusted keys: `cli` (`--trust-key`, repeatable) and the
/// comma-separated `CODE_INDEX_TRUSTED_KEYS`. An empty `--trust-key` is an
/// error (`--trust-key "$UNSET"` must not turn the check off silently).
pub fn trusted_keys(cli: &[String]) -> Result<Vec<PublicKey>, SignError> {
    if cli.iter().any(|k| k.trim().is_empty()) {
        return Err(SignError::new(
            codes::BAD_KEY,
            "--trust-key is empty",
            "pass the public key `code-indexer keygen` printed (ed25519:…); check the variable that should hold it",
        ));
    }
    let env = std::env::var("CODE_INDEX_TRUSTED_KEYS").unwrap_or_default();
    cli.iter()
        .map(String::as_str)
        .chain(env.split([',', ' ', '\n']))
        .filter(|k| !k.trim().is_empty())
        .map(PublicKey::parse)
        .collect()
}

/// The signature check of a snapshot in `dir` whose manifest is `manifest`:
/// none without trusted keys (`None`, or `unverified` when it is signed);
/// else the signing key's id, or why it is refused.
pub fn check_dir(
    trusted: &[PublicKey],
    dir: &std::path::Path,
    manifest: &[u8],
) -> Result<Option<String>, SignError> {
    let sig = std::fs::read(dir.join(SIGNATURE_FILE)).ok();
    if trusted.is_empty() {
        return Ok(sig.map(|_| "unverified".to_string()));
    }
    verify(trusted, manifest, sig.as_deref())
        .map(Some)
        .map_err(|e| SignError::new(e.code, format!("{}: {}", dir.display(), e.message), e.hint))
}

/// Check `sig` (the `manifest.sig` bytes, `None` when absent) over
/// `manifest` against the trusted keys; the signing key's id when it holds.
pub fn verify(
    trusted: &[PublicKey],
    manifest: &[u8],
    sig: Option<&[u8]>,
) -> Result<String, SignError> {
    let Some(sig) = sig else {
        return Err(SignError::new(
            codes::MISSING,
            format!("the snapshot has no {SIGNATURE_FILE}, and only signed snapshots are trusted"),
            "sign it in CI (CODE_INDEX_SIGNING_KEY with ci/publish-snapshot.sh, or `code-indexer sign`), or serve without --trust-key",
        ));
    };
    let invalid = |why: &str| {
        SignError::new(
            codes::INVALID,
            format!("{SIGNATURE_FILE} {why}"),
            "the manifest or its signature was changed after signing: download or rebuild the snapshot from its source",
        )
    };
    let s: Signature =
        serde_json::from_slice(sig).map_err(|_| invalid("is not a signature file"))?;
    if s.algorithm != "ed25519" {
        return Err(invalid("names an algorithm other than ed25519"));
    }
    let bytes = B64
        .decode(&s.signature)
        .map_err(|_| invalid("holds no base64 signature"))?;
    let Some(key) = trusted.iter().find(|k| k.key_id() == s.key_id) else {
        let ids: Vec<String> = trusted.iter().map(PublicKey::key_id).collect();
        return Err(SignError::new(
            codes::UNTRUSTED,
            format!(
                "the snapshot is signed by key {}, which is not trusted",
                clip(&s.key_id)
            ),
            format!(
                "trusted key ids: {}; add the signer's public key with --trust-key if you trust it",
                ids.join(", ")
            ),
        ));
    };
    UnparsedPublicKey::new(&ED25519, &key.bytes)
        .verify(manifest, &bytes)
        .map_err(|_| invalid("does not match the manifest"))?;
    Ok(key.key_id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_and_every_refusal() {
        let (secret, public) = generate().unwrap();
        assert_eq!(PublicKey::parse(&public.to_string()).unwrap(), public);
        assert_eq!(public_of(&secret).unwrap(), public);
        let m = br#"{"snapshot_id": "abc"}"#;
        let sig = serde_json::to_vec(&sign(&secret, m).unwrap()).unwrap();
        assert_eq!(
            verify(std::slice::from_ref(&public), m, Some(&sig)).unwrap(),
            public.key_id()
        );
        // Tampered manifest.
        let e = verify(
            std::slice::from_ref(&public),
            br#"{"snapshot_id": "abd"}"#,
            Some(&sig),
        )
        .unwrap_err();
        assert_eq!(e.code, codes::INVALID);
        // Missing signature.
        assert_eq!(
            verify(std::slice::from_ref(&public), m, None)
                .unwrap_err()
                .code,
            codes::MISSING
        );
        // Another key.
        let (_, other) = generate().unwrap();
        assert_eq!(
            verify(&[other], m, Some(&sig)).unwrap_err().code,
            codes::UNTRUSTED
        );
        // A garbled signature file.
        assert_eq!(
            verify(std::slice::from_ref(&public), m, Some(b"{}"))
                .unwrap_err()
                .code,
            codes::INVALID
        );
        // Bad keys.
        assert_eq!(
            PublicKey::parse("ed25519:xyz").unwrap_err().code,
            codes::BAD_KEY
        );
        assert_eq!(sign("not base64!", m).unwrap_err().code, codes::BAD_KEY);
    }
}
