//! Secret detection and redaction. Redaction replaces every byte of a secret
//! (except newlines) by '*', so byte offsets and line numbers of the stored
//! content stay those of the file on disk.

use std::sync::OnceLock;

use regex::bytes::Regex;

/// A detected secret.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Finding {
    pub kind: &'static str,
    pub line: u32,
    pub start_byte: usize,
    pub end_byte: usize,
    /// First and last characters with the middle masked.
    pub preview: String,
}

struct Rule {
    kind: &'static str,
    re: Regex,
    /// Capture group holding the secret itself (0 = whole match).
    group: usize,
    /// Minimum Shannon entropy (bits/char) of the secret, to skip placeholders.
    min_entropy: f64,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pat: &str, group, min_entropy| Rule {
            kind,
            // ASCII-only classes and word boundaries: secrets are ASCII, and
            // Unicode \b would force the slow engine on every file.
            re: regex::bytes::RegexBuilder::new(pat).unicode(false).build().expect("secret rule compiles"),
            group,
            min_entropy,
        };
        vec![
            r("private_key", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----[\s\S]{16,}?-----END (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----", 0, 0.0),
            r("aws_access_key_id", r"\b((?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})\b", 1, 2.5),
            r("aws_secret_access_key", r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#, 1, 3.0),
            r("github_token", r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})\b", 1, 3.0),
            r("github_pat", r"\b(github_pat_[A-Za-z0-9_]{60,255})\b", 1, 3.0),
            r("gitlab_token", r"\b(glpat-[A-Za-z0-9_\-]{20,})\b", 1, 3.0),
            r("slack_token", r"\b(xox[baprs]-[A-Za-z0-9-]{10,})\b", 1, 3.0),
            r("google_api_key", r"\b(AIza[0-9A-Za-z_\-]{35})\b", 1, 3.0),
            r("stripe_key", r"\b((?:sk|rk)_live_[0-9a-zA-Z]{24,})\b", 1, 3.0),
            r("openai_key", r"\b(sk-(?:proj-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,})\b", 1, 3.0),
            r("anthropic_key", r"\b(sk-ant-[A-Za-z0-9_\-]{32,})\b", 1, 3.0),
            r("jwt", r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b", 1, 3.0),
            r("connection_string_password", r"\b(?:postgres|postgresql|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqp|amqps|mssql|sqlserver)://[^:@/\s]+:([^@/\s]{3,})@", 1, 2.0),
            r("password_assignment", r#"(?i)\b(?:password|passwd|pwd|secret|secret_key|api_key|apikey|access_token|auth_token|client_secret|private_key)\b["']?\s*[:=]\s*["']([^"'\s]{12,})["']"#, 1, 3.5),
        ]
    })
}

fn entropy(s: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Generic assignments must look random: letters and digits mixed, no spaces, not a placeholder.
fn looks_random(s: &[u8]) -> bool {
    let has_digit = s.iter().any(|b| b.is_ascii_digit());
    let has_alpha = s.iter().any(|b| b.is_ascii_alphabetic());
    let placeholder = s
        .windows(3)
        .any(|w| w == b"xxx" || w == b"XXX" || w == b"***" || w == b"...")
        || s.starts_with(b"${")
        || s.starts_with(b"{{")
        || s.starts_with(b"<")
        || s.contains(&b'(');
    has_digit && has_alpha && !placeholder
}

/// Find secrets in `content`, skipping values listed in `ignore_values`.
pub fn detect(content: &[u8], ignore_values: &[String]) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    for rule in rules() {
        for caps in rule.re.captures_iter(content) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            let secret = m.as_bytes();
            if rule.min_entropy > 0.0 && entropy(secret) < rule.min_entropy {
                continue;
            }
            if rule.kind == "password_assignment" && !looks_random(secret) {
                continue;
            }
            if ignore_values.iter().any(|v| v.as_bytes() == secret) {
                continue;
            }
            if found
                .iter()
                .any(|f| f.start_byte < m.end() && m.start() < f.end_byte)
            {
                continue;
            }
            let line = memchr::memchr_iter(b'\n', &content[..m.start()]).count() as u32 + 1;
            found.push(Finding {
                kind: rule.kind,
                line,
                start_byte: m.start(),
                end_byte: m.end(),
                preview: preview(secret),
            });
        }
    }
    found.sort_by_key(|f| f.start_byte);
    found
}

fn preview(secret: &[u8]) -> String {
    let s = String::from_utf8_lossy(secret);
    let chars: Vec<char> = s.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 2..].iter().collect();
    format!("{head}…{tail} ({} chars)", chars.len())
}

/// Replace every byte of each finding by '*' (newlines kept).
pub fn redact(content: &mut [u8], findings: &[Finding]) {
    for f in findings {
        for b in &mut content[f.start_byte..f.end_byte] {
            if *b != b'\n' && *b != b'\r' {
                *b = b'*';
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_redacts_keeping_offsets() {
        let src = b"key = 'AKIAZ7Q2W3E4R5T6Y7U8'\nurl = \"postgres://app:s3cr3tP4ss@db:5432/x\"\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx9b3k2j4h5k6l7m8n9\n-----END RSA PRIVATE KEY-----\npassword = \"changeme\"\n";
        let f = detect(src, &[]);
        let kinds: Vec<_> = f.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            vec![
                "aws_access_key_id",
                "connection_string_password",
                "private_key"
            ]
        );
        assert_eq!(f[1].line, 2);
        let mut c = src.to_vec();
        redact(&mut c, &f);
        assert_eq!(c.len(), src.len());
        let s = String::from_utf8(c).unwrap();
        assert!(!s.contains("AKIAZ7Q2"));
        assert!(s.contains("postgres://app:**********@db"));
        assert_eq!(s.lines().count(), src.split(|b| *b == b'\n').count() - 1);
        assert!(
            s.contains("changeme"),
            "low-entropy placeholder is not a secret"
        );
    }

    #[test]
    fn ignore_values_are_honoured() {
        let f = detect(b"AKIAZ7Q2W3E4R5T6Y7U8", &["AKIAZ7Q2W3E4R5T6Y7U8".into()]);
        assert!(f.is_empty());
    }
}
