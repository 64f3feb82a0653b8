//! Secret detection and redaction. Redaction replaces every byte of a secret
//! (except newlines) by '*', so byte offsets and line numbers of the stored
//! content stay those of the file on disk.
//!
//! Three kinds of rules, in the spirit of gitleaks and detect-secrets:
//! - **provider formats**: tokens whose shape alone says what they are
//!   (`AKIA…`, `ghp_…`, `xoxb-…`, `SG.….…`, PEM private keys, …);
//! - **credentials in context**: the password of a URL of any scheme
//!   (`scheme://user:pw@host`), JDBC `password=`, `Authorization: Bearer/Basic`
//!   headers, Docker `auth` fields, `.npmrc` `_authToken`, command-line
//!   passwords (`-p'…'`, `curl -u user:pw`), Kubernetes Secret data;
//! - **assignments** in every syntax we index (`KEY = "v"`, `KEY: v`,
//!   `"key": "v"`, `KEY=v`, `export KEY=v`, `ENV KEY v`, `.properties`,
//!   `#define KEY "v"`, `<password>v</password>`, `name="key">v<`) whose key
//!   holds a secret word anywhere (`DB_PASSWORD`, `stripeSecret`,
//!   `SENDGRID_API_KEY`), when the value looks random: long enough, high
//!   enough entropy, of mixed character classes.
//!
//! Known example values (AWS's `…EXAMPLE` pair, jwt.io's sample), placeholders
//! (`<…>`, `${…}`, `{{…}}`, `%(…)s`, `changeme`, `xxxx`, repeated characters)
//! and values equal to the user name (`postgres:postgres@`) are not secrets.

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

/// A detected secret.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Finding {
    pub kind: &'static str,
    pub line: u32,
    pub start_byte: usize,
    pub end_byte: usize,
}

impl Finding {
    /// A stable name for the finding that tells nothing about the secret:
    /// a hash of (path, kind, line), as gitleaks fingerprints findings.
    pub fn fingerprint(&self, path: &str) -> String {
        let s = format!("{path}:{}:{}", self.kind, self.line);
        crate::ids::sha256_hex(s.as_bytes())[..12].to_string()
    }
}

/// What a value must look like to count.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    /// The format is the proof (a provider prefix, a PEM block).
    Format,
    /// A credential in context (URL password, header): not a placeholder.
    Context,
    /// A generic value: also long, random and of mixed characters.
    Random,
}

struct Rule {
    kind: &'static str,
    re: Regex,
    /// Capture group holding the secret itself (0 = whole match).
    group: usize,
    check: Check,
}

fn rule(kind: &'static str, pat: &str, group: usize, check: Check) -> Rule {
    Rule {
        kind,
        // ASCII-only classes and word boundaries: secrets are ASCII, and
        // Unicode \b would force the slow engine on every file.
        re: RegexBuilder::new(pat)
            .unicode(false)
            .build()
            .expect("secret rule compiles"),
        group,
        check,
    }
}

/// Words that make a key a secret's name, wherever they stand in it.
const SECRET_WORDS: &str = r"(?:passwd|password|passphrase|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key|client[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|credentials?|creds?|auth[_.-]?key|webhook[_.-]?url|conn(?:ection)?[_.-]?str(?:ing)?|dsn)";

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        use Check::*;
        let key = format!(r"[A-Za-z0-9_.\-]*{SECRET_WORDS}[A-Za-z0-9_.\-]*");
        // `RABBITMQ_DEFAULT_PASS`, `db.pass`: "pass" as a whole part of the key.
        let pass_key = r"[A-Za-z0-9_.\-]*[_.\-]pass";
        vec![
            // Provider formats.
            rule("private_key", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----[\s\S]{16,}?-----END (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----", 0, Format),
            // An Ed25519 private key as bare base64 PKCS#8 (v2 with its public key,
            // or v1), as `code-indexer keygen` and `openssl … -outform DER | base64` write it.
            rule("private_key", r"\b((?:MFECAQEwBQYDK2VwBCIEI[A-Za-z0-9+/]{64,}|MC4CAQAwBQYDK2VwBCIEI[A-Za-z0-9+/]{22,})={0,2})", 1, Format),
            rule("aws_access_key_id", r"\b((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})\b", 1, Format),
            rule("aws_secret_access_key", r#"(?i)aws_?secret(?:_?access)?_?key["']?\s*(?:[:=]|:=|=>)\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#, 1, Context),
            // The secret key passed right after its key id: `new BasicAWSCredentials("AKIA…", "…")`.
            rule("aws_secret_access_key", r#"\b(?:AKIA|ASIA)[A-Z0-9]{16}["'`]?[\s,;:]{1,40}["'`]?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#, 1, Context),
            rule("discord_bot_token", r"\b([MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,})\b", 1, Random),
            rule("github_token", r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})\b", 1, Format),
            rule("github_pat", r"\b(github_pat_[A-Za-z0-9_]{60,255})\b", 1, Format),
            rule("gitlab_token", r"\b(gl(?:pat|dt|ptt|rt|soat|cbt)-[A-Za-z0-9_\-]{20,})\b", 1, Format),
            rule("slack_token", r"\b(xox[abposre]-[A-Za-z0-9-]{10,})\b", 1, Format),
            rule("slack_app_token", r"\b(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)\b", 1, Format),
            rule("slack_webhook", r"(?i)https://hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_\-]{20,})", 1, Format),
            rule("discord_webhook", r"(?i)https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/([A-Za-z0-9_\-]{40,})", 1, Format),
            rule("stripe_key", r"\b((?:sk|rk)_(?:live|test|prod)_[0-9a-zA-Z]{20,})\b", 1, Format),
            rule("google_api_key", r"\b(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)", 1, Format),
            rule("google_oauth_secret", r"\b(GOCSPX-[A-Za-z0-9_\-]{28})\b", 1, Format),
            rule("openai_key", r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,})\b", 1, Format),
            rule("openai_project_key", r"\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,})\b", 1, Format),
            rule("anthropic_key", r"\b(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{32,})\b", 1, Format),
            rule("sendgrid_key", r"\b(SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64})\b", 1, Format),
            rule("twilio_api_key", r"\b(SK[0-9a-fA-F]{32})\b", 1, Random),
            rule("npm_token", r"\b(npm_[A-Za-z0-9]{36})\b", 1, Format),
            rule("npmrc_auth", r"(?m)(?:^|:)(?:_authToken|_auth|_password)\s*=\s*([^\s\x22']{8,})", 1, Context),
            rule("docker_auth", r#""auth"\s*:\s*"([A-Za-z0-9+/]{8,}={0,2})""#, 1, Context),
            rule("azure_storage_key", r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)", 1, Format),
            rule("azure_sas_signature", r"(?i)[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})", 1, Context),
            rule("mailgun_key", r"\b(key-[0-9a-f]{32})\b", 1, Random),
            rule("mailchimp_key", r"\b([0-9a-f]{32}-us\d{1,2})\b", 1, Random),
            rule("shopify_token", r"\b(shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b", 1, Format),
            rule("pypi_token", r"\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})", 1, Format),
            rule("digitalocean_token", r"\b(do[por]_v1_[a-f0-9]{64})\b", 1, Format),
            rule("vault_token", r"\b(hv[sbr]\.[A-Za-z0-9_\-]{24,})\b", 1, Format),
            rule("databricks_token", r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b", 1, Format),
            rule("linear_key", r"\b(lin_api_[A-Za-z0-9]{40})\b", 1, Format),
            rule("newrelic_key", r"\b(NRAK-[A-Z0-9]{27})\b", 1, Format),
            rule("grafana_token", r"\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})\b", 1, Format),
            rule("age_secret_key", r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b", 1, Format),
            rule("telegram_bot_token", r"\b(\d{8,10}:AA[A-Za-z0-9_\-]{33})\b", 1, Format),
            rule("huggingface_token", r"\b(hf_[A-Za-z]{34})\b", 1, Format),
            rule("jwt", r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})", 1, Format),
            // Credentials in context.
            rule("url_password", r"\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://([^:@/\s\x22'<>`]*):([^@/\s\x22'<>`]{3,})@[A-Za-z0-9\[]", 2, Context),
            rule("jdbc_password", r"(?i)[?;&]password=([^;&\s\x22'<>]{3,})", 1, Context),
            rule("bearer_token", r"(?i)\bauthorization\x22?'?\s*[:=,]\s*\x22?'?\s*(?:bearer|token)\s+([A-Za-z0-9._~+/=\-]{12,})", 1, Context),
            rule("basic_auth", r"(?i)\b(?:authorization\x22?'?\s*[:=,]\s*\x22?'?\s*)?basic\s+([A-Za-z0-9+/]{12,}={0,2})(?:[^A-Za-z0-9+/=]|$)", 1, Context),
            rule("cli_password", r#"(?:^|\s)(?:-p|--password[= ]|--pass[= ])["']([^\s"']{6,})["']"#, 1, Random),
            rule("cli_password", r#"(?:^|\s)--password[= ]([^\s"'$]{6,})"#, 1, Random),
            rule("curl_user_password", r#"\b(?:curl|wget|http)\b[^\n]*?\s(?:-u|--user|--http-user)[\s=]*["']?[^\s"':]+:([^\s"'@]{4,})["']?"#, 1, Context),
            // Every value of a Kubernetes Secret's data/stringData map (checked per line below).
            rule("k8s_secret_data", r"(?m)^[ \t]*(?:data|stringData):[ \t]*\r?\n((?:[ \t]+[A-Za-z0-9_.\-]+:[^\n]*\n?)+)", 1, Context),
            // Assignments whose key names a secret.
            rule("secret_assignment", &format!(r#"(?i)(?:^|[^A-Za-z0-9_.\-])({key})(?:\[\])?[\x22'`]?(?:\s*:\s*&?(?:'static\s+)?[A-Za-z_][A-Za-z0-9_<>]*(?:\[\])?)?\s*(?:=>|:=|::=|[:=])\s*(?:"((?:[^"\\\r\n]|\\.){{6,}})"|'((?:[^'\\\r\n]|\\.){{6,}})'|`([^`\r\n]{{6,}})`|([^\s"'`]{{6,}}))"#), 0, Random),
            rule("secret_assignment", &format!(r#"(?i)(?:^|[^A-Za-z0-9_.\-])({pass_key})[\x22'`]?\s*(?:=>|:=|[:=])\s*(?:"((?:[^"\\\r\n]|\\.){{6,}})"|'((?:[^'\\\r\n]|\\.){{6,}})'|`([^`\r\n]{{6,}})`|([^\s"'`]{{6,}}))"#), 0, Random),
            rule("secret_assignment", &format!(r"(?im)^\s*ENV\s+({key})\s+([^\s=\x22']{{6,}})\s*$"), 0, Random),
            rule("secret_assignment", &format!(r#"(?im)^\s*#\s*define\s+({key})\s+"([^"\r\n]{{6,}})""#), 0, Random),
            rule("secret_assignment", &format!(r#"(?i)\bname\s*=\s*["']({key})["'][^>]*>([^<\s]{{6,}})<"#), 0, Random),
            rule("secret_assignment", &format!(r"(?i)<({key})>([^<\s]{{6,}})</"), 0, Random),
        ]
    })
}

/// Every rule's pattern in one set: one pass over a file tells which rules
/// match at all, and only those run their own search (most files match
/// none; 45 searches per file cost more than the parse of the file).
fn rule_set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        RegexSetBuilder::new(rules().iter().map(|r| r.re.as_str()))
            .unicode(false)
            .size_limit(64 << 20)
            .dfa_size_limit(64 << 20)
            .build()
            .expect("the secret rules compile as a set")
    })
}

/// Shannon entropy in bits per byte.
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

/// Documented example values and test fixtures known to be harmless.
const KNOWN_EXAMPLES: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    // RFC 7617's Basic example (Aladdin:open sesame).
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
];

/// Words whose presence makes a value a placeholder.
const PLACEHOLDER_WORDS: &[&str] = &[
    "example",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "your_",
    "your-",
    "yourpass",
    "dummy",
    "redacted",
    "replace_with",
    "replaceme",
    "insert_",
    "fixme",
    "xxxx",
    "****",
    "....",
    "environ",
    "process.env",
    "getenv",
    "secret_here",
    "password_here",
    "notasecret",
    "not-a-secret",
];

/// Templates and references: `${VAR}`, `{{ .Values.x }}`, `%(name)s`,
/// `$(cmd)`, `<your-password>`, `$VAR`, `%VAR%`.
fn is_template(s: &str) -> bool {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"\$\{[^}]*\}|\{\{.*\}\}|%\([A-Za-z_][A-Za-z0-9_]*\)[sd]|\$\([A-Za-z_][^)]*\)|^<[^<>]*>$|^\$[A-Za-z_][A-Za-z0-9_]*$|^%[A-Za-z_][A-Za-z0-9_]*%$",
        )
        .expect("template pattern compiles")
    })
    .is_match(s)
}

/// Common defaults that are not secrets (lowercase).
const WEAK_DEFAULTS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "admin",
    "root",
    "postgres",
    "mysql",
    "guest",
    "test",
    "user",
    "pass",
    "default",
    "none",
    "null",
    "true",
    "false",
    "undefined",
    "empty",
    "token",
    "apikey",
    "api_key",
    "123456",
    "12345678",
    "123456789",
    "1234567890",
    "qwerty",
    "letmein",
];

/// Is `v` a placeholder, template, documented example or weak default?
fn is_placeholder(v: &[u8]) -> bool {
    let s = String::from_utf8_lossy(v);
    let lower = s.to_ascii_lowercase();
    if KNOWN_EXAMPLES.iter().any(|e| s.contains(e)) {
        return true;
    }
    if WEAK_DEFAULTS.contains(&lower.as_str()) {
        return true;
    }
    // A value that is mostly the key's own word ("password1", "passwordPASSWORD",
    // "my_secret"); "MySecret#2024x" keeps enough besides to be a password.
    let rest = ["password", "passwd", "secret"]
        .iter()
        .fold(lower.clone(), |r, w| r.replace(w, ""));
    if rest.len() < lower.len() && rest.len() < 6 {
        return true;
    }
    if PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w)) || is_template(&s) {
        return true;
    }
    // One character repeated over most of the value.
    let mut counts = [0usize; 256];
    for &b in v {
        counts[b as usize] += 1;
    }
    counts.iter().any(|&c| c * 10 >= v.len() * 6)
}

/// Does a generic value look like a generated secret rather than a word,
/// a path, a number or code?
fn looks_random(v: &[u8]) -> bool {
    if v.len() < 8 || v.contains(&b' ') {
        return false;
    }
    let s = String::from_utf8_lossy(v);
    // Paths, URLs without credentials, numbers, words joined by separators.
    if s.starts_with('/') || s.starts_with("./") || s.starts_with("~/") || s.contains("://") {
        return false;
    }
    if s.bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'_')
    {
        return false;
    }
    let wordish = |b: u8| b.is_ascii_lowercase() || b == b'-' || b == b'_' || b == b'.';
    if s.bytes().all(wordish) {
        return false;
    }
    // A constant's name (FORBIDDEN_VALUE2), a file name (form.html).
    let upper_ident = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_';
    if s.as_bytes()[0].is_ascii_uppercase() && s.bytes().all(upper_ident) {
        return false;
    }
    if s.rsplit_once('.').is_some_and(|(_, e)| {
        (2..=4).contains(&e.len()) && e.bytes().all(|b| b.is_ascii_lowercase())
    }) && !s.contains('=')
    {
        return false;
    }
    // Code, not a literal: calls, indexing, member paths like `form.cleaned_data`.
    if s.contains('(') && s.ends_with(')') || s.ends_with(']') {
        return false;
    }
    if s.split('.').count() > 1
        && s.split('.').all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && p.as_bytes()[0].is_ascii_alphabetic()
        })
        && !s.bytes().any(|b| b.is_ascii_digit())
    {
        return false;
    }
    // Without a digit, only a long, high-entropy value that is not words
    // joined by separators ("X-Fake-Connection-Token", "Bad-Token").
    if !s.bytes().any(|b| b.is_ascii_digit()) {
        let words = s
            .split(['-', '_', '.', '/', ' ', ':', '|'])
            .all(|w| w.bytes().all(|b| b.is_ascii_alphabetic()));
        if words || v.len() < 16 || entropy(v) < 3.5 {
            return false;
        }
    }
    let classes = [
        s.bytes().any(|b| b.is_ascii_lowercase()),
        s.bytes().any(|b| b.is_ascii_uppercase()),
        s.bytes().any(|b| b.is_ascii_digit()),
        s.bytes().any(|b| b.is_ascii_punctuation()),
    ]
    .iter()
    .filter(|&&c| c)
    .count();
    let min_entropy = if v.len() >= 20 { 3.0 } else { 2.7 };
    classes >= 2 && entropy(v) >= min_entropy
}

/// Files where an unquoted value after `KEY=` or `KEY:` is a literal (config,
/// env, shell, docs), not code.
fn unquoted_literals(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    name.starts_with(".env")
        || name.starts_with("dockerfile")
        || name.ends_with(".env")
        || name == ".npmrc"
        || name == "makefile"
        || matches!(
            ext,
            "yaml"
                | "yml"
                | "toml"
                | "ini"
                | "cfg"
                | "conf"
                | "properties"
                | "env"
                | "sh"
                | "bash"
                | "zsh"
                | "md"
                | "markdown"
                | "rst"
                | "txt"
                | "tf"
                | "tfvars"
                | "hcl"
                | "xml"
                | "npmrc"
                | "pypirc"
                | "netrc"
                | "config"
                | "json"
        )
        || !name.contains('.')
}

/// The values of a Kubernetes Secret's `data:`/`stringData:` block
/// (`span`: the block's lines), as (start, end) byte ranges in the content.
fn k8s_values(content: &[u8], span: regex::bytes::Match) -> Vec<(usize, usize)> {
    static LINE: OnceLock<Regex> = OnceLock::new();
    let line = LINE.get_or_init(|| {
        RegexBuilder::new(
            r"(?m)^[ \t]+[A-Za-z0-9_.\-]+:[ \t]*['\x22]?([^\s'\x22#]{6,})['\x22]?[ \t]*\r?$",
        )
        .unicode(false)
        .build()
        .expect("k8s line pattern compiles")
    });
    line.captures_iter(&content[span.start()..span.end()])
        .filter_map(|c| c.get(1))
        .map(|m| (span.start() + m.start(), span.start() + m.end()))
        .collect()
}

/// Find secrets in the content of the file at `path`, skipping values
/// listed in `ignore_values`.
pub fn detect(path: &str, content: &[u8], ignore_values: &[String]) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    let literals = unquoted_literals(path);
    let k8s_secret = literals && memchr::memmem::find(content, b"kind: Secret").is_some();
    let matched = rule_set().matches(content);
    for (i, rule) in rules().iter().enumerate() {
        if !matched.matched(i) {
            continue;
        }
        for caps in rule.re.captures_iter(content) {
            // The secret span(s): the rule's group; for assignments whichever
            // value group matched (2: quoted, 3: unquoted); for a Kubernetes
            // Secret, each value of its data block.
            let spans: Vec<(usize, usize, bool)> = if rule.kind == "k8s_secret_data" {
                if !k8s_secret {
                    continue;
                }
                match caps.get(1) {
                    Some(m) => k8s_values(content, m)
                        .into_iter()
                        .map(|(a, b)| (a, b, true))
                        .collect(),
                    None => continue,
                }
            } else if rule.kind == "secret_assignment" {
                // Quoted when a quote stands right before the value.
                match (2..caps.len()).find_map(|g| caps.get(g)) {
                    Some(m) => {
                        let quoted = m.start() > 0 && b"\"'`".contains(&content[m.start() - 1]);
                        let mut end = m.end();
                        // An unquoted value runs to the end of the word; a trailing
                        // delimiter of a flow map or a statement is not part of it.
                        while !quoted && end > m.start() + 6 && b",;)]}".contains(&content[end - 1])
                        {
                            end -= 1;
                        }
                        vec![(m.start(), end, quoted)]
                    }
                    None => continue,
                }
            } else {
                match caps.get(rule.group) {
                    Some(m) => vec![(m.start(), m.end(), true)],
                    None => continue,
                }
            };
            for (start, end, quoted) in spans {
                let secret = &content[start..end];
                let ok = match rule.check {
                    Check::Format => !KNOWN_EXAMPLES
                        .iter()
                        .any(|e| String::from_utf8_lossy(secret).contains(e)),
                    Check::Context => {
                        !is_placeholder(secret) && secret_context_ok(rule.kind, &caps, secret)
                    }
                    Check::Random => {
                        !is_placeholder(secret)
                            && (quoted || !secret.iter().any(|b| b"([{".contains(b)))
                            && looks_random(secret)
                            // In code, an unquoted value is an expression.
                            && (quoted || literals)
                    }
                };
                if !ok || ignore_values.iter().any(|v| v.as_bytes() == secret) {
                    continue;
                }
                let line = memchr::memchr_iter(b'\n', &content[..start]).count() as u32 + 1;
                found.push(Finding {
                    kind: rule.kind,
                    line,
                    start_byte: start,
                    end_byte: end,
                });
            }
        }
    }
    // Overlapping findings merge into one span (the first rule's kind):
    // `AKIA…:<secret key>` is masked whole, not only the key id.
    found.sort_by_key(|f| (f.start_byte, std::cmp::Reverse(f.end_byte)));
    let mut merged: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(m) if f.start_byte < m.end_byte => m.end_byte = m.end_byte.max(f.end_byte),
            _ => merged.push(f),
        }
    }
    merged
}

/// Rule-specific checks of a contextual credential.
fn secret_context_ok(kind: &str, caps: &regex::bytes::Captures, secret: &[u8]) -> bool {
    match kind {
        // `postgres:postgres@`: an example, not a secret.
        "url_password" => caps.get(1).map(|u| u.as_bytes()) != Some(secret) && secret.len() >= 4,
        // A Docker auth is base64 of `user:password`.
        "docker_auth" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(secret)
                .is_ok_and(|d| d.contains(&b':') && d.len() >= 4)
        }
        "basic_auth" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(secret)
                .is_ok_and(|d| {
                    d.iter().position(|&b| b == b':').is_some_and(|i| {
                        let (u, p) = (&d[..i], &d[i + 1..]);
                        !p.is_empty() && u != p && !is_placeholder(p)
                    })
                })
        }
        "bearer_token" | "aws_secret_access_key" | "azure_sas_signature" => entropy(secret) >= 3.0,
        "jdbc_password" | "npmrc_auth" | "curl_user_password" => secret.len() >= 4,
        // A Secret's value: base64 or a random string, not a plain word.
        "k8s_secret_data" => secret.len() >= 8 && entropy(secret) >= 3.0,
        _ => true,
    }
}

/// A finding in a file of the tree.
pub struct Located {
    pub path: String,
    pub finding: Finding,
    /// The secret's bytes (for `secrets --reveal` on a terminal only).
    pub value: Vec<u8>,
}

/// Every finding in the walked files that the config does not ignore, in
/// (path, offset) order. Binary files (a NUL byte) are skipped, as the build
/// skips them.
pub fn scan(
    entries: &[crate::walk::Entry],
    cfg: &crate::config::Effective,
    pool: &rayon::ThreadPool,
) -> Vec<Located> {
    use rayon::prelude::*;
    let mut out: Vec<Located> = pool.install(|| {
        entries
            .par_iter()
            .filter(|e| !cfg.secrets_ignore.is_match(&e.rel))
            .flat_map_iter(|e| {
                let bytes = std::fs::read(&e.abs).unwrap_or_default();
                if memchr::memchr(0, &bytes).is_some() {
                    return Vec::new();
                }
                detect(&e.rel, &bytes, &cfg.config.secrets.ignore_values)
                    .into_iter()
                    .map(|f| Located {
                        path: e.rel.clone(),
                        value: bytes[f.start_byte..f.end_byte].to_vec(),
                        finding: f,
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    out.sort_by(|a, b| (&a.path, a.finding.start_byte).cmp(&(&b.path, b.finding.start_byte)));
    out
}

/// The error of `index --secrets=fail` when secrets were found: the list
/// (kind, path, line, fingerprint; never the secrets) and how to proceed.
pub fn gate_error(found: &[Located]) -> crate::error::Error {
    let files: std::collections::BTreeSet<&str> = found.iter().map(|l| l.path.as_str()).collect();
    let mut msg = format!(
        "{} secret(s) in {} file(s), and secrets are set to fail the build:",
        found.len(),
        files.len()
    );
    for l in found.iter().take(50) {
        msg.push_str(&format!(
            "\n  {}:{}: {} {}",
            l.path,
            l.finding.line,
            l.finding.kind,
            l.finding.fingerprint(&l.path)
        ));
    }
    if found.len() > 50 {
        msg.push_str(&format!("\n  … and {} more", found.len() - 50));
    }
    crate::error::Error::new(
        crate::error::codes::SECRETS_FOUND,
        msg,
        "remove each secret from the tree and rotate it (it is in the git history); a false alarm is \
         silenced by `secrets: {ignore: [\"<glob>\"], ignore_values: [\"<value>\"]}` in .code-index.yaml; \
         or build with --secrets=redact to publish them masked",
    )
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
mod tests;
