use super::*;

fn secrets_of(path: &str, src: &str) -> Vec<String> {
    detect(path, src.as_bytes(), &[])
        .iter()
        .map(|f| src[f.start_byte..f.end_byte].to_string())
        .collect()
}

#[test]
fn finds_and_redacts_keeping_offsets() {
    let src = b"key = 'AKIAZ7Q2W3E4R5T6Y7U8'\nurl = \"postgres://app:s3cr3tP4ss@db:5432/x\"\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx9b3k2j4h5k6l7m8n9\n-----END RSA PRIVATE KEY-----\npassword = \"changeme\"\n";
    let f = detect("a.py", src, &[]);
    let kinds: Vec<_> = f.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec!["aws_access_key_id", "url_password", "private_key"]
    );
    assert_eq!(f[1].line, 2);
    let mut c = src.to_vec();
    redact(&mut c, &f);
    assert_eq!(c.len(), src.len());
    let s = String::from_utf8(c).unwrap();
    assert!(!s.contains("AKIAZ7Q2"));
    assert!(s.contains("postgres://app:**********@db"));
    assert_eq!(s.lines().count(), src.split(|b| *b == b'\n').count() - 1);
    assert!(s.contains("changeme"), "a placeholder is not a secret");
}

#[test]
fn assignments_in_every_syntax() {
    let v = "Zq8#rT2vLp9!xW4k";
    for (path, src) in [
        ("a.py", format!("DB_PASSWORD = \"{v}\"\n")),
        ("a.py", format!("connect(password='{v}')\n")),
        ("a.ts", format!("const stripeSecret = `{v}`;\n")),
        ("a.ts", format!("export default {{ apiKey: \"{v}\" }};\n")),
        ("a.ts", format!("const apiToken: string = \"{v}\";\n")),
        ("a.rs", format!("const DB_PASSWORD: &str = \"{v}\";\n")),
        ("a.hpp", format!("constexpr char kApiKey[] = \"{v}\";\n")),
        ("a.h", format!("#define WIFI_PASSWORD \"{v}\"\n")),
        ("a.go", format!("cfg := Config{{Password: \"{v}\"}}\n")),
        (
            "A.java",
            format!("private static final String SENDGRID_API_KEY = \"{v}\";\n"),
        ),
        ("c.yaml", format!("db:\n  password: {v}\n")),
        ("c.yaml", format!("  RABBITMQ_DEFAULT_PASS: {v}\n")),
        ("c.toml", format!("client_secret = \"{v}\"\n")),
        ("c.json", format!("{{\"accessToken\": \"{v}\"}}\n")),
        (".env", format!("SECRET_KEY={v}\n")),
        ("run.sh", format!("export API_TOKEN={v}\n")),
        ("Dockerfile", format!("ENV DB_PASSWORD {v}\n")),
        ("Dockerfile", format!("ENV DB_PASSWORD={v}\n")),
        (
            "app.properties",
            format!("spring.datasource.password={v}\n"),
        ),
        ("c.xml", format!("<password>{v}</password>\n")),
        (
            "h.xml",
            format!("<property name=\"hibernate.connection.password\">{v}</property>\n"),
        ),
    ] {
        assert_eq!(secrets_of(path, &src), vec![v.to_string()], "{path}: {src}");
    }
}

#[test]
fn credentials_in_context() {
    for (src, want) in [
        ("postgresql+psycopg2://app:Kq29xLm4Pz@db/x", "Kq29xLm4Pz"),
        ("redis://:Rq2mX9pL4v@cache:6379/0", "Rq2mX9pL4v"),
        (
            "jdbc:mysql://db/x?user=app&password=Vb8nQ2xZr4",
            "Vb8nQ2xZr4",
        ),
        (
            "-H 'Authorization: Bearer abcDEF1234567890ghiJKL'",
            "abcDEF1234567890ghiJKL",
        ),
        (
            "\"auth\": \"YWRtaW46UzNjcjN0UGFzcw==\"",
            "YWRtaW46UzNjcjN0UGFzcw==",
        ),
        (
            "mysqldump -u root -p'jCcn0GqsM3KhMrK4dW63' shop",
            "jCcn0GqsM3KhMrK4dW63",
        ),
        (
            "curl -fsS -u \"admin:uSb81jBqtkZjwuGS\" https://ci/api",
            "uSb81jBqtkZjwuGS",
        ),
    ] {
        assert_eq!(secrets_of("a.sh", src), vec![want.to_string()], "{src}");
    }
    let k8s = "kind: Secret\nstringData:\n  password: rYZ4Wg1kkIkceZPoZCSik8\ndata:\n  stripe-key: c2tfbGl2ZV91NmpzWVlKZGhHZXQ2M3Jl\n";
    assert_eq!(
        secrets_of("s.yaml", k8s),
        vec!["rYZ4Wg1kkIkceZPoZCSik8", "c2tfbGl2ZV91NmpzWVlKZGhHZXQ2M3Jl"]
    );
}

#[test]
fn quotes_and_delimiters_inside_values_are_masked_whole() {
    for (path, src, want) in [
        (
            "a.py",
            r#"DB_PASSWORD = "Kx9$mQ2w'R7!pL4z""#,
            r#"Kx9$mQ2w'R7!pL4z"#,
        ),
        (
            "c.json",
            r#"{"password": "Zq8\"rT2vLp9!xW4k"}"#,
            r#"Zq8\"rT2vLp9!xW4k"#,
        ),
        (
            ".env",
            "DB_PASSWORD=Zq8#rT2v;Lp9!xW4k\n",
            "Zq8#rT2v;Lp9!xW4k",
        ),
        (
            "c.yaml",
            "db: {password: Zq8rT2vLp9xW4k, user: app}\n",
            "Zq8rT2vLp9xW4k",
        ),
        (
            ".env",
            "DB_PASSWORD=SuperSecret-9Qz7Lk\n",
            "SuperSecret-9Qz7Lk",
        ),
        (
            "a.sh",
            "psql postgres://app:MySecret#2024@db/x\n",
            "MySecret#2024",
        ),
    ] {
        assert_eq!(
            secrets_of(path, src),
            vec![want.to_string()],
            "{path}: {src}"
        );
    }
    // The key id and the secret key after it are one masked span.
    let src = "AWS_CREDS=\"AKIAZ7Q2W3E4R5T6Y7U8:Fa1lykVg5kpYYrDYo57oJP6hq6ItLy8k+QY0vPTo\"\n";
    let f = detect(".env", src.as_bytes(), &[]);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        &src[f[0].start_byte..f[0].end_byte],
        "AKIAZ7Q2W3E4R5T6Y7U8:Fa1lykVg5kpYYrDYo57oJP6hq6ItLy8k+QY0vPTo"
    );
    // Kubernetes Secrets with CRLF line ends.
    let k8s = "kind: Secret\r\ndata:\r\n  tls.key: c2tfbGl2ZV91NmpzWVlKZGhHZXQ2M3Jl\r\n";
    assert_eq!(
        secrets_of("s.yaml", k8s),
        vec!["c2tfbGl2ZV91NmpzWVlKZGhHZXQ2M3Jl"]
    );
}

#[test]
fn look_alikes_are_not_secrets() {
    for (path, src) in [
        ("a.py", "aws_access_key_id = 'AKIAIOSFODNN7EXAMPLE'"),
        (
            "a.py",
            "aws_secret_access_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
        ),
        (
            "a.py",
            "DATABASE_URL = 'postgres://postgres:postgres@localhost/db'",
        ),
        ("c.yaml", "password: <password>"),
        ("c.yaml", "password: ${DB_PASSWORD}"),
        ("c.yaml", "password: \"{{ .Values.password }}\""),
        ("a.py", "password = os.environ['DB_PASSWORD']"),
        ("a.py", "token = get_token(request)"),
        ("a.py", "password = form.cleaned_data"),
        ("a.py", "PASSWORD_MIN_LENGTH = 12"),
        ("a.py", "password_field = 'password'"),
        ("a.py", "api_key = ''"),
        ("a.py", "SECRET_KEY = 'xxxxxxxxxxxxxxxxxxxxxx'"),
        ("a.py", "label = 'Enter your password'"),
        ("k.yaml", "secretName: my-app-tls-secret"),
        ("a.js", "const token = jwt.sign(payload, key);"),
        ("a.py", "data = {\"password1\": \"password1\"}"),
        ("a.go", "PrivateKey:  testP256PrivateKey,"),
        (
            "a.go",
            "const fakeConnectionToken = \"X-Fake-Connection-Token\"",
        ),
        ("c.yaml", "kind: ConfigMap\ndata:\n  mode: production\n"),
    ] {
        assert!(secrets_of(path, src).is_empty(), "{path}: {src}");
    }
}

#[test]
fn ignore_values_are_honoured() {
    let f = detect(
        "a",
        b"AKIAZ7Q2W3E4R5T6Y7U8",
        &["AKIAZ7Q2W3E4R5T6Y7U8".into()],
    );
    assert!(f.is_empty());
}

#[test]
fn fingerprints_do_not_depend_on_the_secret() {
    let a = detect("a.py", b"k = 'AKIAZ7Q2W3E4R5T6Y7U8'", &[]);
    let b = detect("a.py", b"k = 'AKIAQQQQW3E4R5T6Y7U8'", &[]);
    assert_eq!(a[0].fingerprint("a.py"), b[0].fingerprint("a.py"));
    assert_ne!(a[0].fingerprint("a.py"), a[0].fingerprint("b.py"));
}

#[test]
fn keygen_secret_keys_are_secrets() {
    for _ in 0..20 {
        let (secret, _public) = code_index_schemas::signing::generate().unwrap();
        let src = format!("{secret}\n");
        assert_eq!(
            secrets_of("code-index.key", &src),
            vec![secret.clone()],
            "{secret}"
        );
        let src = format!("CODE_INDEX_SIGNING_KEY={secret}\n");
        assert_eq!(secrets_of(".env", &src).concat(), secret);
    }
}
