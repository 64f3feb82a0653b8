"""A synthetic repository with planted secrets and harmless look-alikes, for
the redaction tests (test_secrets_planted.py) and bench/bench_secrets.py.

    corpus = make_corpus(Path("/tmp/acme-shop"), seed=1)

writes an ordinary-looking monorepo (Django app, TypeScript front end and Node
server, Go services, Java/Android, Rust crate, C firmware header, deployment
YAML/TOML/JSON/.env/.properties/INI/XML, Dockerfiles, shell scripts, docs) of
about 60 files. Every secret value is drawn from `random.Random(seed)`, in the
format its provider documents (and gitleaks' rule set describes), and written
the way real code writes it in that syntax. Every look-alike is something real
code contains that must stay readable.

Choices worth knowing:
- Stripe `sk_test_` keys are planted as SECRETS (kind stripe_test_secret_key):
  gitleaks' stripe-access-token rule flags `(sk|rk)_(test|live|prod)_`, and a
  test-mode secret key still grants API access to the account's test data.
  Publishable keys (`pk_live_`, `pk_test_`) are public by design: look-alikes.
- A Twilio account SID (AC + 32 hex) is an identifier, not a credential: it is
  written next to its auth token but recorded as neither.
- Where only part of a string is the credential, `value` is that part: the
  password of a URL (not the user), the last segment of a Slack webhook URL,
  the base64 body of a PEM key (as laid out in the file: indentation or `\\n`
  escapes included), the base64 of `Authorization: Basic` and of a Docker
  `auth` field.
- `public_prefix` is the format marker at the start of `value` that identifies
  the provider but carries no secret (`ghp_`, `sk-ant-api03-`, a JWT's header);
  `material` is the rest.
- Hidden files are not indexed (the walk skips them like ripgrep), so the
  `.env`/`.npmrc`/`.pypirc`/`.docker/config.json` contents live in files named
  as deployments ship them (`deploy/production.env`, `docker/npmrc`,
  `deploy/pypirc`, `deploy/docker/config.json`).

Invariants (checked here, relied on by the tests and the bench): every planted
value occurs exactly once in its file, and no two planted items share a line,
so a finding's (path, line) names at most one planted item.
"""

from __future__ import annotations

import base64
import json
import random
import string
import textwrap
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
BASE32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
# Symbols a generic password may hold and still sit unquoted in .env, YAML,
# .properties, INI (no '%' interpolation, no '#' comment, no '$' expansion)
# and unescaped in XML, JSON and every string literal (no quotes, '\\', '&', '<').
PW_SYMBOLS = "!@^*-_+=.~"
URL_SAFE = ALNUM + "-_.~"
DJANGO_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)"
# Words for passphrase-style passwords; none is a substring of a corpus path or
# of a finding kind, so a passphrase's prefix cannot be mistaken for either.
WORDS = ("amber", "falcon", "quartz", "tundra", "velvet", "mosaic", "lantern", "harbor", "cobalt",
         "meadow", "orchid", "saffron", "thimble", "walrus", "zephyr", "pebble", "juniper", "glacier")
# Strings a random value must not contain (they read as placeholders).
_PLACEHOLDERISH = ("xxx", "XXX", "...", "***", "EXAMPLE", "example")

# jwt.io's sample token (HS256, secret "your-256-bit-secret"): documentation, not a credential.
JWT_IO_SAMPLE = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
# AWS's documented example credentials.
AWS_EXAMPLE_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@dataclass(frozen=True)
class Planted:
    kind: str
    path: str
    value: str
    public_prefix: str = ""
    line: int = 0  # 1-based lines of the planted block (a PEM key: BEGIN..END)
    end_line: int = 0
    start: int = 0  # byte span of `value` in the file
    end: int = 0

    @property
    def material(self) -> str:
        """The value without its public format marker."""
        return self.value[len(self.public_prefix):]

    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line == self.end_line else f"{self.path}:{self.line}-{self.end_line}"


@dataclass
class Corpus:
    root: Path
    seed: int
    secrets: list[Planted]
    lookalikes: list[Planted]
    files: dict[str, str] = field(repr=False)  # path -> text as written

    def kinds(self) -> set[str]:
        return {p.kind for p in self.secrets}

    def by_path(self) -> dict[str, list[Planted]]:
        out: dict[str, list[Planted]] = {}
        for p in self.secrets + self.lookalikes:
            out.setdefault(p.path, []).append(p)
        return out


@dataclass
class _Pending:
    secret: bool
    kind: str
    value: str
    prefix: str
    block: str


class _Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.files: dict[str, str] = {}
        self.secrets: list[Planted] = []
        self.lookalikes: list[Planted] = []
        self._pending: list[_Pending] = []

    # ---------------------------------------------------------------- planting

    def s(self, kind: str, value: str, prefix: str = "", block: str | None = None) -> str:
        """Plant a secret in the file written next; returns `block` (default: value)."""
        assert value.startswith(prefix), (kind, value, prefix)
        self._pending.append(_Pending(True, kind, value, prefix, block or value))
        return block or value

    def l(self, kind: str, value: str, block: str | None = None) -> str:
        """Plant a look-alike (value must stay visible) in the file written next."""
        self._pending.append(_Pending(False, kind, value, "", block or value))
        return block or value

    def write(self, path: str, template: str, **values: str) -> None:
        """Dedent `template`, fill its «name» slots, and record the pending plants."""
        text = textwrap.dedent(template)
        for k, v in values.items():
            slot = f"«{k}»"
            assert text.count(slot) == 1, (path, k)
            text = text.replace(slot, v)
        assert "«" not in text, (path, text[text.index("«"):][:40])
        assert path not in self.files, path
        self.files[path] = text
        data = text.encode()
        for p in self._pending:
            assert text.count(p.value) == 1, f"{path}: {p.kind} value occurs {text.count(p.value)} times"
            assert text.count(p.block) == 1 and p.value in p.block, (path, p.kind)
            b0 = text.index(p.block)
            v0 = b0 + p.block.index(p.value)
            start = len(text[:v0].encode())
            end = start + len(p.value.encode())
            line = text.count("\n", 0, b0) + 1
            end_line = text.count("\n", 0, b0 + len(p.block.rstrip("\n"))) + 1
            assert data[start:end] == p.value.encode()
            item = Planted(p.kind, path, p.value, p.prefix, line, end_line, start, end)
            (self.secrets if p.secret else self.lookalikes).append(item)
        self._pending = []

    # ---------------------------------------------------------------- random values

    def chars(self, alphabet: str, n: int) -> str:
        while True:
            v = "".join(self.rng.choice(alphabet) for _ in range(n))
            if not any(w in v for w in _PLACEHOLDERISH):
                return v

    def alnum(self, n: int) -> str:
        return self.chars(ALNUM, n)

    def hex(self, n: int) -> str:
        return self.chars(HEX, n)

    def digits(self, n: int) -> str:
        return str(self.rng.randint(1, 9)) + self.chars(string.digits, n - 1)

    def randbytes(self, n: int) -> bytes:
        return self.rng.randbytes(n)

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.randbytes(nbytes)).decode()

    def b64url(self, nbytes: int) -> str:
        return base64.urlsafe_b64encode(self.randbytes(nbytes)).decode().rstrip("=")

    def uuid(self) -> str:
        return str(uuid.UUID(bytes=self.randbytes(16), version=4))

    def password(self, style: str | None = None) -> str:
        """A password as people and generators make them: random alphanumerics,
        with symbols, or a passphrase. Starts with a letter or digit (so it can
        sit unquoted in YAML)."""
        style = style or self.rng.choice(("alnum", "alnum", "symbols", "symbols", "passphrase"))
        if style == "passphrase":
            words = self.rng.sample(WORDS, 3)
            return f"{words[0]}-{words[1]}-{self.rng.randint(10, 99)}-{words[2]}"
        if style == "alnum":
            return self.chars(string.ascii_letters, 1) + self.alnum(self.rng.randint(15, 23))
        while True:
            v = self.chars(string.ascii_letters, 1) + self.chars(ALNUM + PW_SYMBOLS * 2, self.rng.randint(17, 25))
            if any(c in PW_SYMBOLS for c in v) and any(c.isdigit() for c in v):
                return v

    def url_password(self) -> str:
        return self.chars(string.ascii_letters, 1) + self.chars(URL_SAFE, self.rng.randint(15, 23))

    def django_key(self) -> str:
        return self.chars(DJANGO_CHARS, 50)

    def aws_key_id(self) -> str:
        return "AKIA" + self.chars(BASE32, 16)

    def aws_secret(self) -> str:
        return self.chars(ALNUM + "/+", 40)

    def stripe(self, prefix: str) -> str:
        return prefix + self.alnum(self.rng.choice((24, 99)))

    def slack_bot(self) -> str:
        return f"xoxb-{self.digits(self.rng.choice((11, 12, 13)))}-{self.digits(13)}-{self.alnum(24)}"

    def slack_user(self) -> str:
        return f"xoxp-{self.digits(11)}-{self.digits(12)}-{self.digits(13)}-{self.hex(32)}"

    def jwt(self, alg: str = "HS256") -> tuple[str, str]:
        """(token, its header segment with the dot): realistic base64url JSON."""
        header = {"alg": alg, "typ": "JWT"}
        if alg.startswith("RS"):
            header["kid"] = self.hex(16)
        iat = self.rng.randint(1_690_000_000, 1_720_000_000)
        payload = {
            "iss": "https://auth.acme.example/",
            "sub": self.uuid(),
            "aud": self.rng.choice(("orders-api", "acme-internal", "billing")),
            "iat": iat,
            "exp": iat + self.rng.choice((3600 * 24 * 365, 3600 * 24 * 3650)),
            "scope": self.rng.choice(("orders:read orders:write", "admin", "service")),
        }

        def enc(obj) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")

        head = enc(header) + "."
        sig = self.b64url(256 if alg.startswith("RS") else 32)
        return head + enc(payload) + "." + sig, head

    def pem(self, label: str, der: bytes, width: int = 64, indent: str = "", sep: str = "\n") -> tuple[str, str]:
        """(block, body): a PEM block of `der` with the body lines joined by
        sep + indent (sep "\\\\n" for a JSON string)."""
        b = base64.b64encode(der).decode()
        lines = [b[i : i + width] for i in range(0, len(b), width)]
        body = (sep + indent).join(lines)
        block = f"-----BEGIN {label}-----{sep}{indent}{body}{sep}{indent}-----END {label}-----"
        return block, body

    def rsa_der(self) -> bytes:  # PKCS#1 RSAPrivateKey, 2048 bits
        return bytes.fromhex("308204a40201000282010100") + self.randbytes(1180)

    def pkcs8_der(self) -> bytes:  # PKCS#8 PrivateKeyInfo around an RSA key
        return bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8") + self.randbytes(1192)

    def ec_der(self) -> bytes:  # SEC1 ECPrivateKey, P-256
        return (bytes.fromhex("30770201010420") + self.randbytes(32)
                + bytes.fromhex("a00a06082a8648ce3d030107a144034200") + b"\x04" + self.randbytes(64))

    def openssh_der(self) -> bytes:
        return (b"openssh-key-v1\x00" + b"\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01"
                + b"\x00\x00\x00\x33\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + self.randbytes(32)
                + self.randbytes(180))

    def rsa_public_der(self) -> bytes:
        return bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100") + self.randbytes(261)

    def cert_der(self) -> bytes:
        return bytes.fromhex("3082037d30820265a003020102021400") + self.randbytes(880)

    def png_data_uri(self) -> str:
        png = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + self.randbytes(120)
        return "data:image/png;base64," + base64.b64encode(png).decode()


def make_corpus(root: Path, seed: int) -> Corpus:
    """Write the corpus under root (created; must not exist or be empty) and
    return what was planted where."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    assert not any(root.iterdir()), f"{root} is not empty"
    g = _Gen(seed)
    for writer in _WRITERS:
        writer(g)
    _check_invariants(g)
    for rel, text in sorted(g.files.items()):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode())
    return Corpus(root=root, seed=seed, secrets=list(g.secrets), lookalikes=list(g.lookalikes), files=dict(g.files))


def _check_invariants(g: _Gen) -> None:
    items = g.secrets + g.lookalikes
    by_path: dict[str, list[Planted]] = {}
    for p in items:
        by_path.setdefault(p.path, []).append(p)
    for path, ps in by_path.items():
        ps.sort(key=lambda p: p.line)
        for a, b in zip(ps, ps[1:]):
            assert a.end_line < b.line, f"{path}: {a.kind} (lines {a.line}-{a.end_line}) and {b.kind} (line {b.line}) share a line"
    values = Counter(p.value for p in g.secrets)
    dup = [v for v, n in values.items() if n > 1]
    assert not dup, f"secret values planted twice: {dup}"
    for s in g.secrets:
        assert len(s.value) >= 12, (s.kind, s.value)


# ============================================================================
# The files. Each writer plants its values with g.s (secret) / g.l (look-alike)
# and writes one file; «name» marks where a value goes.


def _python(g: _Gen) -> None:
    g.write("webapp/settings.py", '''\
        """Django settings for the acme shop (production)."""

        import os
        from pathlib import Path

        BASE_DIR = Path(__file__).resolve().parent.parent

        SECRET_KEY = '«django»'

        DEBUG = False
        ALLOWED_HOSTS = ["shop.acme.example", "www.shop.acme.example"]

        INSTALLED_APPS = [
            "django.contrib.admin",
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "shop",
            "payments",
        ]

        DATABASES = {
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": "shop",
                "USER": "shop_app",
                "PASSWORD": "«db_pw»",
                "HOST": "db.internal.acme.example",
                "PORT": "5432",
            },
            "analytics": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": "analytics",
                "USER": "readonly",
                "PASSWORD": «env_pw»,
                "HOST": "analytics.internal.acme.example",
            },
        }

        «min_len»
        AUTH_PASSWORD_VALIDATORS = [
            {
                "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
                "OPTIONS": {"min_length": PASSWORD_MIN_LENGTH},
            },
            {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
        ]

        EMAIL_HOST = "smtp.mailgun.org"
        EMAIL_HOST_USER = "postmaster@mg.acme.example"
        EMAIL_HOST_PASSWORD = "«mail_pw»"
        EMAIL_USE_TLS = True

        AWS_ACCESS_KEY_ID = "«akia»"
        AWS_SECRET_ACCESS_KEY = "«aws_secret»"
        AWS_STORAGE_BUCKET_NAME = "acme-shop-media"
        AWS_S3_REGION_NAME = "eu-west-1"

        SESSION_COOKIE_AGE = 1209600
        ''',
        django=g.s("django_secret_key", g.django_key()),
        db_pw=g.s("generic_password", g.password()),
        env_pw=g.l("env_lookup", 'os.environ["ANALYTICS_DB_PASSWORD"]'),
        min_len=g.l("password_constant", "PASSWORD_MIN_LENGTH = 12"),
        mail_pw=g.s("generic_password", g.password()),
        akia=g.s("aws_access_key_id", g.aws_key_id(), "AKIA"),
        aws_secret=g.s("aws_secret_access_key", g.aws_secret()),
    )

    g.write("webapp/payments/stripe_client.py", '''\
        """Thin wrapper around the Stripe SDK."""

        import stripe

        stripe.api_key = "«sk_live»"
        «pk_live»
        STRIPE_REPORTING_KEY = "«rk_live»"
        STRIPE_WEBHOOK_SECRET = "«whsec»"


        def charge(customer_id: str, amount_cents: int, currency: str = "eur") -> stripe.PaymentIntent:
            return stripe.PaymentIntent.create(
                customer=customer_id,
                amount=amount_cents,
                currency=currency,
                confirm=True,
            )


        def report_runs() -> list:
            return stripe.reporting.ReportRun.list(api_key=STRIPE_REPORTING_KEY, limit=10).data


        def verify_webhook(payload: bytes, sig_header: str):
            return stripe.Webhook.construct_event(payload, sig_header, STRIPE_WEBHOOK_SECRET)
        ''',
        sk_live=g.s("stripe_live_secret_key", g.stripe("sk_live_"), "sk_live_"),
        pk_live=g.l("stripe_publishable_key", f'STRIPE_PUBLISHABLE_KEY = "pk_live_{g.alnum(24)}"'),
        rk_live=g.s("stripe_restricted_key", g.stripe("rk_live_"), "rk_live_"),
        whsec=g.s("stripe_webhook_secret", "whsec_" + g.alnum(32), "whsec_"),
    )

    webhook_token = g.alnum(24)
    g.write("webapp/notifications.py", '''\
        """Outbound notifications: e-mail (SendGrid, Mailgun), SMS (Twilio), Slack."""

        import requests
        from sendgrid import SendGridAPIClient
        from slack_sdk import WebClient
        from twilio.rest import Client

        SENDGRID_API_KEY = "«sendgrid»"
        TWILIO_ACCOUNT_SID = "AC«sid»"
        TWILIO_AUTH_TOKEN = "«twilio_token»"
        SLACK_WEBHOOK_URL = "https://hooks.slack.com/services/T«team»/B«chan»/«webhook»"
        MAILGUN_DOMAIN = "mg.acme.example"

        slack = WebClient(token="«xoxb»")


        def send_sms(to: str, body: str) -> str:
            client = Client(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)
            return client.messages.create(to=to, from_="+15005550006", body=body).sid


        def send_mail(to: str, subject: str, text: str) -> int:
            resp = requests.post(
                f"https://api.mailgun.net/v3/{MAILGUN_DOMAIN}/messages",
                auth=("api", "«mailgun»"),
                data={"from": f"shop@{MAILGUN_DOMAIN}", "to": to, "subject": subject, "text": text},
                timeout=10,
            )
            return resp.status_code


        def send_newsletter(message) -> int:
            return SendGridAPIClient(SENDGRID_API_KEY).send(message).status_code


        def alert(text: str) -> None:
            requests.post(SLACK_WEBHOOK_URL, json={"text": text}, timeout=5)
            slack.chat_postMessage(channel="#ops", text=text)
        ''',
        sendgrid=g.s("sendgrid_api_key", f"SG.{g.chars(B64URL, 22)}.{g.chars(B64URL, 43)}", "SG."),
        sid=g.hex(32),
        twilio_token=g.s("twilio_auth_token", g.hex(32)),
        team=g.chars(UPPER_ALNUM, 8),
        chan=g.chars(UPPER_ALNUM, 10),
        webhook=g.s("slack_webhook_url", webhook_token),
        xoxb=g.s("slack_bot_token", g.slack_bot(), "xoxb-"),
        mailgun=g.s("mailgun_api_key", "key-" + g.hex(32), "key-"),
    )

    g.write("webapp/llm.py", '''\
        """Product-description summaries through the LLM providers."""

        import os

        import anthropic
        from openai import OpenAI

        openai_client = OpenAI(api_key="«openai»")
        claude = anthropic.Anthropic(
            api_key="«anthropic»",
        )
        FALLBACK_KEY = «fallback»


        def get_token() -> str:
            return os.environ["LLM_GATEWAY_TOKEN"]


        def summarize(text: str) -> str:
            «get_token»
            msg = claude.messages.create(
                model="claude-3-5-sonnet-latest",
                max_tokens=200,
                messages=[{"role": "user", "content": f"Summarize: {text}"}],
                extra_headers={"X-Gateway-Token": token},
            )
            return msg.content[0].text
        ''',
        openai=g.s("openai_project_key", f"sk-proj-{g.chars(B64URL, 74)}T3BlbkFJ{g.chars(B64URL, 74)}", "sk-proj-"),
        anthropic=g.s("anthropic_api_key", f"sk-ant-api03-{g.chars(B64URL, 93)}AA", "sk-ant-api03-"),
        fallback=g.l("env_lookup", 'os.environ.get("OPENAI_API_KEY", "")'),
        get_token=g.l("function_call", "token = get_token()"),
    )

    g.write("webapp/db.py", '''\
        """Database and cache connections."""

        import os

        import redis
        from sqlalchemy import create_engine

        SQLALCHEMY_DATABASE_URI = "postgresql+psycopg2://shop_app:«pg_pw»@db.internal.acme.example:5432/shop"
        CACHE_URL = "redis://:«redis_pw»@cache.internal.acme.example:6379/0"
        TEST_DATABASE_URI = "«test_url»"


        def engine():
            return create_engine(SQLALCHEMY_DATABASE_URI, pool_pre_ping=True)


        def engine_from_env():
            «env_pw»
            user = os.environ.get("DB_USER", "shop_app")
            return create_engine(f"«template_url»")


        def cache() -> redis.Redis:
            return redis.Redis.from_url(CACHE_URL)
        ''',
        pg_pw=g.s("url_password(postgresql+psycopg2)", g.url_password()),
        redis_pw=g.s("url_password(redis)", g.url_password()),
        test_url=g.l("local_default_url", "postgres://postgres:postgres@localhost:5432/shop_test"),
        env_pw=g.l("env_lookup", 'password = os.environ["DB_PASSWORD"]'),
        template_url=g.l("templated_url", "postgresql+psycopg2://{user}:{password}@db/shop"),
    )

    g.write("webapp/auth/tokens.py", '''\
        """Password-reset tokens and calls to the internal directory."""

        import time

        import jwt
        import requests

        JWT_SIGNING_SECRET = "«jwt_secret»"
        «field»
        RESET_TOKEN_TTL = 3600


        «reset_def»
            payload = {"sub": str(user.pk), "exp": int(time.time()) + RESET_TOKEN_TTL, "purpose": "reset"}
            return jwt.encode(payload, JWT_SIGNING_SECRET, algorithm="HS256")


        def fetch_profile(access_token: str) -> dict:
            headers = {«bearer_tpl»}
            return requests.get("https://id.acme.example/me", headers=headers, timeout=5).json()


        def fetch_internal_directory() -> dict:
            headers = {"Authorization": "Bearer «bearer»"}
            return requests.get("https://directory.internal.acme.example/v1/people", headers=headers, timeout=5).json()
        ''',
        jwt_secret=g.s("generic_secret", g.b64url(36)),
        field=g.l("password_field_name", 'password_field = "password"'),
        reset_def=g.l("function_name", "def reset_password_token(user) -> str:"),
        bearer_tpl=g.l("templated_bearer", '"Authorization": f"Bearer {access_token}"'),
        bearer=g.s("bearer_token", g.b64url(30)),
    )

    service_jwt, head = g.jwt("HS256")
    g.write("tests/test_auth.py", '''\
        import jwt
        import pytest

        # jwt.io's example token (HS256, secret "your-256-bit-secret").
        JWT_IO_SAMPLE = "«jwt_io»"
        SERVICE_JWT = "«service_jwt»"


        def test_decode_sample():
            claims = jwt.decode(JWT_IO_SAMPLE, "your-256-bit-secret", algorithms=["HS256"])
            assert claims["name"] == "John Doe"


        @pytest.mark.django_db
        def test_login(client):
            resp = client.post("/login", data={"username": "admin", «changeme»})
            assert resp.status_code == 302


        def test_service_token_accepted(client):
            resp = client.get("/api/orders", HTTP_AUTHORIZATION=f"Bearer {SERVICE_JWT}")
            assert resp.status_code == 200
        ''',
        jwt_io=g.l("jwt_io_sample", JWT_IO_SAMPLE),
        service_jwt=g.s("jwt", service_jwt, head),
        changeme=g.l("placeholder_password", '"password": "changeme"'),
    )

    g.write("tests/fixtures/user.json", '''\
        {
          "id": 42,
          "username": "demo",
          «masked»,
          "email": "demo@acme.example",
          "is_staff": false
        }
        ''',
        masked=g.l("placeholder_password", '"password": "xxxxxxxx"'),
    )

    cluster = g.chars(string.ascii_lowercase + string.digits, 5)
    basic = base64.b64encode(f"elastic:{g.password('alnum')}".encode()).decode()
    g.write("scripts/backfill.py", '''\
        """One-off: copy legacy orders from Mongo into Elasticsearch, open issues for failures."""

        import requests
        from github import Github
        from pymongo import MongoClient

        MONGO_URI = "mongodb+srv://backfill:«mongo_pw»@cluster0.«cluster».mongodb.net/orders?retryWrites=true&w=majority"
        gh = Github("«ghp»")
        ELASTIC = "https://search.internal.acme.example:9200"
        ELASTIC_HEADERS = {"Authorization": "Basic «basic»", "Content-Type": "application/json"}


        def main() -> None:
            orders = MongoClient(MONGO_URI).legacy.orders
            repo = gh.get_repo("acme/shop")
            for doc in orders.find({"migrated": {"$ne": True}}):
                doc["_id"] = str(doc["_id"])
                r = requests.put(f"{ELASTIC}/orders/_doc/{doc['_id']}", json=doc, headers=ELASTIC_HEADERS, timeout=10)
                if r.status_code >= 300:
                    repo.create_issue(title=f"backfill failed for {doc['_id']}", body=r.text[:1000])


        if __name__ == "__main__":
            main()
        ''',
        mongo_pw=g.s("url_password(mongodb+srv)", g.url_password()),
        cluster=cluster,
        ghp=g.s("github_classic_token", "ghp_" + g.alnum(36), "ghp_"),
        basic=g.s("basic_auth_header", basic),
    )


def _typescript(g: _Gen) -> None:
    g.write("frontend/src/config.ts", '''\
        export const MAPS_API_KEY = "«aiza»";

        export const searchConfig = {
          appId: "«algolia_app»",
          apiKey: "«algolia_key»",
          indexName: "products",
        };

        export «placeholder»;
        export «release_sha»;
        export const API_BASE = "https://api.acme.example/v1";
        ''',
        aiza=g.s("google_api_key", "AIza" + g.chars(B64URL, 35), "AIza"),
        algolia_app=g.chars(UPPER_ALNUM, 10),
        algolia_key=g.s("generic_api_key", g.hex(32)),
        placeholder=g.l("i18n_string", 'const PASSWORD_PLACEHOLDER = "Enter your password"'),
        release_sha=g.l("git_commit_sha", f'const RELEASE_SHA = "{g.hex(40)}"'),
    )

    g.write("frontend/src/api/client.ts", '''\
        import axios, { AxiosInstance } from "axios";

        const SHOPIFY_ADMIN_TOKEN = "«shpat»";

        export const internal: AxiosInstance = axios.create({
          baseURL: "https://internal-api.acme.example",
          headers: { Authorization: "Bearer «bearer»" },
        });

        export function withAuth(token: string): AxiosInstance {
          return axios.create({ headers: { «tpl» } });
        }

        export async function shopifyProducts(): Promise<unknown> {
          const resp = await fetch("https://acme-shop.myshopify.com/admin/api/2024-01/products.json", {
            headers: { "X-Shopify-Access-Token": SHOPIFY_ADMIN_TOKEN },
          });
          return resp.json();
        }
        ''',
        shpat=g.s("shopify_access_token", "shpat_" + g.hex(32), "shpat_"),
        bearer=g.s("bearer_token", g.b64url(30)),
        tpl=g.l("templated_bearer", "Authorization: `Bearer ${token}`"),
    )

    g.write("frontend/src/i18n/en.json", '''\
        {
          "login": {
            "title": "Sign in",
            «enter»,
            «forgot»,
            «short»,
            «sent»
          }
        }
        ''',
        enter=g.l("i18n_string", '"passwordLabel": "Enter your password"'),
        forgot=g.l("i18n_string", '"forgot": "Forgot your password?"'),
        short=g.l("i18n_string", '"tooShort": "Your password must be at least 12 characters."'),
        sent=g.l("i18n_string", '"resetSent": "We sent a password reset token to your email."'),
    )

    g.write("server/src/index.ts", '''\
        import express from "express";
        import session from "express-session";
        import OpenAI from "openai";

        const app = express();
        const openai = new OpenAI({ apiKey: "«openai»" });

        app.use(
          session({
            secret: "«session»",
            resave: false,
            saveUninitialized: false,
          }),
        );

        export const oauth = {
          «client_id»,
          clientSecret: "«gocspx»",
          redirectUri: "https://shop.acme.example/auth/callback",
        };

        app.post("/describe", async (req, res) => {
          const out = await openai.chat.completions.create({
            model: "gpt-4o-mini",
            messages: [{ role: "user", content: String(req.body.text) }],
          });
          res.json({ text: out.choices[0].message.content });
        });

        app.listen(3000);
        ''',
        openai=g.s("openai_legacy_key", f"sk-{g.alnum(20)}T3BlbkFJ{g.alnum(20)}", "sk-"),
        session=g.s("generic_secret", g.alnum(32)),
        client_id=g.l("oauth_client_id", f'clientId: "{g.digits(12)}-{g.chars(string.ascii_lowercase + string.digits, 32)}.apps.googleusercontent.com"'),
        gocspx=g.s("oauth_client_secret", "GOCSPX-" + g.chars(B64URL, 28), "GOCSPX-"),
    )

    g.write("server/src/db.ts", '''\
        import knex from "knex";

        export const reporting = knex({
          client: "mysql2",
          connection: "mysql://root:«mysql_pw»@10.0.3.7:3306/reporting",
        });

        export const primary = knex({
          client: "pg",
          connection: {
            host: "db.internal.acme.example",
            user: "orders",
            password: "«pg_pw»",
            database: "orders",
          },
        });

        export const replica = knex({
          client: "pg",
          connection: {
            host: process.env.DB_HOST,
            user: process.env.DB_USER,
            «env»,
          },
        });
        ''',
        mysql_pw=g.s("url_password(mysql)", g.url_password()),
        pg_pw=g.s("generic_password", g.password()),
        env=g.l("env_lookup", "password: process.env.DB_PASSWORD"),
    )

    g.write("frontend/src/components/Avatar.tsx", '''\
        import React from "react";

        const PLACEHOLDER =
          "«png»";

        export «demo_id»;

        export interface User {
          id: string;
          name: string;
          avatarUrl?: string;
        }

        export function Avatar({ user }: { user: User }) {
          return <img className="avatar" alt={user.name} src={user.avatarUrl ?? PLACEHOLDER} />;
        }
        ''',
        png=g.l("base64_image", g.png_data_uri()),
        demo_id=g.l("uuid_id", f'const DEMO_USER_ID = "{g.uuid()}"'),
    )


def _javascript(g: _Gen) -> None:
    g.write("frontend/webpack.config.js", '''\
        const path = require("path");

        // Long-term cached bundle from the previous release, still referenced by old emails.
        «legacy»

        module.exports = {
          entry: "./src/index.tsx",
          output: {
            path: path.resolve(__dirname, "dist"),
            filename: "[name].[contenthash:16].js",
            publicPath: "/static/",
          },
          resolve: { extensions: [".ts", ".tsx", ".js"] },
          module: { rules: [{ test: /\\.tsx?$/, use: "ts-loader", exclude: /node_modules/ }] },
        };
        ''',
        legacy=g.l("content_hash", f'const LEGACY_BUNDLE = "main.{g.hex(16)}.js";'),
    )

    g.write("scripts/seed-stripe.js", '''\
        // Seed the Stripe test account with products for local development.
        const stripe = require("stripe")("«sk_test»");

        async function main() {
          for (const name of ["T-shirt", "Mug", "Sticker pack"]) {
            const product = await stripe.products.create({ name });
            await stripe.prices.create({ product: product.id, unit_amount: 1500, currency: "eur" });
          }
        }

        main().catch((e) => {
          console.error(e);
          process.exit(1);
        });
        ''',
        sk_test=g.s("stripe_test_secret_key", g.stripe("sk_test_"), "sk_test_"),
    )

    g.write("scripts/deploy.js", '''\
        const { execSync } = require("child_process");

        const GITLAB_TOKEN = '«glpat»';
        const npmToken = process.env.NPM_TOKEN || '«npm»';

        function run(cmd, env = {}) {
          execSync(cmd, { stdio: "inherit", env: { ...process.env, ...env } });
        }

        run("npm publish --access restricted", { NPM_TOKEN: npmToken });
        run("curl -fsS -X POST https://gitlab.com/api/v4/projects/4711/trigger/pipeline", {
          GITLAB_TOKEN,
        });
        ''',
        glpat=g.s("gitlab_pat", "glpat-" + g.chars(B64URL, 20), "glpat-"),
        npm=g.s("npm_token", "npm_" + g.alnum(36), "npm_"),
    )

    g.write("frontend/public/sw.js", '''\
        importScripts("https://storage.googleapis.com/workbox-cdn/releases/6.5.4/workbox-sw.js");

        workbox.precaching.precacheAndRoute([
          «rev1»,
          «rev2»,
        ]);
        ''',
        rev1=g.l("content_hash", f'{{ url: "/index.html", revision: "{g.hex(32)}" }}'),
        rev2=g.l("content_hash", f'{{ url: "/manifest.json", revision: "{g.hex(32)}" }}'),
    )

    g.write("server/legacy/app.js", '''\
        // Legacy checkout service (to be retired).
        module.exports = {
          port: 8080,
          stripeSecret: '«stripe_secret»',
          access_token: '«access_token»',
          amqpUrl: 'amqp://orders:«amqp_pw»@rabbitmq.internal.acme.example:5672/%2F',
          cookieName: 'sid',
        };
        ''',
        stripe_secret=g.s("generic_secret", g.alnum(32)),
        access_token=g.s("generic_access_token", g.alnum(40)),
        amqp_pw=g.s("url_password(amqp)", g.url_password()),
    )


def _go(g: _Gen) -> None:
    g.write("services/billing/config.go", '''\
        package billing

        «header»

        const apiKey = "«api_key»"

        // DBConfig holds the connection settings of the billing database.
        type DBConfig struct {
        	Host     string
        	User     string
        	Password string
        }

        var Default = DBConfig{
        	Host:     "db.internal.acme.example",
        	User:     "billing",
        	Password: "«db_pw»",
        }

        var (
        	twilioAPIKey    = "«sk»"
        	twilioAPISecret = "«sk_secret»"
        )
        ''',
        header=g.l("header_name", 'const tokenHeader = "X-Auth-Token"'),
        api_key=g.s("generic_api_key", g.alnum(32)),
        db_pw=g.s("generic_password", g.password()),
        sk=g.s("twilio_api_key", "SK" + g.hex(32), "SK"),
        sk_secret=g.s("generic_secret", g.alnum(32)),
    )

    block, body = g.pem("EC PRIVATE KEY", g.ec_der())
    g.write("services/billing/client_test.go", '''\
        package billing

        import (
        	"crypto/x509"
        	"encoding/pem"
        	"testing"
        )

        const testKeyPEM = `«pem»`

        «order_id»

        func TestParseKey(t *testing.T) {
        	b, _ := pem.Decode([]byte(testKeyPEM))
        	if _, err := x509.ParseECPrivateKey(b.Bytes); err != nil {
        		t.Fatal(err)
        	}
        }
        ''',
        pem=g.s("private_key_ec", body, block=block),
        order_id=g.l("uuid_id", f'var orderID = "{g.uuid()}"'),
    )

    basic = base64.b64encode(f"gateway:{g.password('symbols')}".encode()).decode()
    g.write("services/gateway/main.go", '''\
        package main

        import (
        	"log"
        	"net/http"

        	"github.com/slack-go/slack"
        )

        var slackClient = slack.New("«xoxp»")

        func proxy(w http.ResponseWriter, r *http.Request) {
        	req, _ := http.NewRequest(r.Method, "https://legacy.internal.acme.example"+r.URL.Path, r.Body)
        	req.Header.Set("Authorization", "Basic «basic»")
        	resp, err := http.DefaultClient.Do(req)
        	if err != nil {
        		http.Error(w, err.Error(), http.StatusBadGateway)
        		return
        	}
        	defer resp.Body.Close()
        	w.WriteHeader(resp.StatusCode)
        }

        func forward(token string, r *http.Request) {
        	«tpl»
        }

        func main() {
        	http.HandleFunc("/", proxy)
        	log.Fatal(http.ListenAndServe(":8080", nil))
        }
        ''',
        xoxp=g.s("slack_user_token", g.slack_user(), "xoxp-"),
        basic=g.s("basic_auth_header", basic),
        tpl=g.l("templated_bearer", 'r.Header.Set("Authorization", "Bearer "+token)'),
    )

    g.write("services/gateway/go.mod", '''\
        module github.com/acme/shop/services/gateway

        go 1.22

        require github.com/slack-go/slack v0.12.5
        ''')

    g.write("services/gateway/go.sum", '''\
        github.com/slack-go/slack v0.12.5 «h1»
        github.com/slack-go/slack v0.12.5/go.mod «h2»
        ''',
        h1=g.l("go_sum_hash", f"h1:{g.b64(32)}"),
        h2=g.l("go_sum_hash", f"h1:{g.b64(32)}"),
    )


def _java(g: _Gen) -> None:
    g.write("android/app/src/main/java/com/acme/shop/ApiConfig.java", '''\
        package com.acme.shop;

        public final class ApiConfig {
            private static final String API_KEY = "«api_key»";
            private static final String CLIENT_SECRET = "«client_secret»";
            static final String MAPS_KEY = "«aiza»";
            «param»
            public static final String BASE_URL = "https://api.acme.example/v1/";

            private ApiConfig() {}

            public static String apiKey() {
                return API_KEY;
            }

            public static String clientSecret() {
                return CLIENT_SECRET;
            }
        }
        ''',
        api_key=g.s("generic_api_key", g.alnum(32)),
        client_secret=g.s("generic_client_secret", g.alnum(40)),
        aiza=g.s("google_api_key", "AIza" + g.chars(B64URL, 35), "AIza"),
        param=g.l("password_field_name", 'public static final String PASSWORD_PARAM = "password";'),
    )

    g.write("backend/src/main/resources/application.properties", '''\
        spring.application.name=orders
        spring.datasource.url=jdbc:postgresql://db.internal.acme.example:5432/orders?user=orders&password=«jdbc_pw»&ssl=true
        spring.datasource.username=orders
        spring.datasource.password=«spring_pw»
        db.password=«db_pw»
        spring.mail.host=smtp.acme.example
        spring.mail.password=«mail_pw»
        «keystore»
        app.jwt.secret=«jwt_secret»
        management.endpoints.web.exposure.include=health,info
        ''',
        jdbc_pw=g.s("jdbc_password", g.url_password()),
        spring_pw=g.s("generic_password", g.password()),
        db_pw=g.s("generic_password", g.password()),
        mail_pw=g.s("generic_password", g.password()),
        keystore=g.l("templated_password", "server.ssl.key-store-password=${KEYSTORE_PASSWORD}"),
        jwt_secret=g.s("generic_secret", g.b64(48)),
    )

    g.write("backend/src/main/java/com/acme/backend/DataSourceConfig.java", '''\
        package com.acme.backend;

        import com.amazonaws.auth.AWSCredentials;
        import com.amazonaws.auth.BasicAWSCredentials;
        import java.sql.Connection;
        import java.sql.DriverManager;
        import java.sql.SQLException;

        public class DataSourceConfig {
            private static final String URL =
                "jdbc:sqlserver://sql.internal.acme.example:1433;databaseName=orders;user=sa;password=«mssql_pw»;encrypt=true";

            public Connection connect() throws SQLException {
                return DriverManager.getConnection(URL);
            }

            public AWSCredentials s3Credentials() {
                return new BasicAWSCredentials(
                    "«akia»",
                    "«aws_secret»");
            }
        }
        ''',
        mssql_pw=g.s("jdbc_password", g.url_password()),
        akia=g.s("aws_access_key_id", g.aws_key_id(), "AKIA"),
        aws_secret=g.s("aws_secret_access_key", g.aws_secret()),
    )


def _rust_c(g: _Gen) -> None:
    user_id = str(g.rng.randint(10**17, 10**18 - 1))
    discord = (base64.b64encode(user_id.encode()).decode().rstrip("=") + "." + g.chars(B64URL, 6)
               + "." + g.chars(B64URL, 38))
    g.write("crates/notifier/src/lib.rs", '''\
        //! Sends order notifications to Discord and e-mail.

        use reqwest::blocking::Client;

        const DISCORD_BOT_TOKEN: &str = "«discord»";
        «header»
        static DB_PASSWORD: &str = "«db_pw»";

        pub fn discord(channel: u64, text: &str) -> reqwest::Result<()> {
            Client::new()
                .post(format!("https://discord.com/api/v10/channels/{channel}/messages"))
                .header("Authorization", format!("Bot {DISCORD_BOT_TOKEN}"))
                .json(&serde_json::json!({ "content": text }))
                .send()?
                .error_for_status()?;
            Ok(())
        }

        pub fn sendgrid_client() -> Client {
            let api_key = "«sendgrid»";
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert("Authorization", format!("Bearer {api_key}").parse().unwrap());
            Client::builder().default_headers(headers).build().unwrap()
        }

        pub fn db_url() -> String {
            format!("postgres://notifier:{DB_PASSWORD}@db.internal.acme.example/notifier")
        }
        ''',
        discord=g.s("discord_bot_token", discord),
        header=g.l("header_name", 'const TOKEN_HEADER: &str = "X-Auth-Token";'),
        db_pw=g.s("generic_password", g.password()),
        sendgrid=g.s("sendgrid_api_key", f"SG.{g.chars(B64URL, 22)}.{g.chars(B64URL, 43)}", "SG."),
    )

    g.write("crates/notifier/Cargo.toml", '''\
        [package]
        name = "notifier"
        version = "0.3.1"
        edition = "2021"

        [dependencies]
        reqwest = { version = "0.12", features = ["blocking", "json"] }
        serde_json = "1"
        ''')

    g.write("crates/notifier/Cargo.lock", '''\
        # This file is automatically @generated by Cargo.
        # It is not intended for manual editing.
        version = 3

        [[package]]
        name = "itoa"
        version = "1.0.11"
        source = "registry+https://github.com/rust-lang/crates.io-index"
        «c1»

        [[package]]
        name = "serde_json"
        version = "1.0.120"
        source = "registry+https://github.com/rust-lang/crates.io-index"
        «c2»
        ''',
        c1=g.l("lockfile_sha256", f'checksum = "{g.hex(64)}"'),
        c2=g.l("lockfile_sha256", f'checksum = "{g.hex(64)}"'),
    )

    g.write("firmware/include/secrets.h", '''\
        #ifndef ACME_SECRETS_H
        #define ACME_SECRETS_H

        #define WIFI_SSID "acme-iot"
        #define WIFI_PASSWORD "«wifi_pw»"
        #define MQTT_USER "sensor-17"
        #define MQTT_PASSWORD "«mqtt_pw»"
        static const char *API_TOKEN = "«token»";
        «key_id»

        #endif /* ACME_SECRETS_H */
        ''',
        wifi_pw=g.s("generic_password", g.password()),
        mqtt_pw=g.s("generic_password", g.password()),
        token=g.s("generic_access_token", g.alnum(40)),
        key_id=g.l("uuid_id", f'#define OTA_KEY_ID "{g.uuid()}"'),
    )

    g.write("firmware/src/net.hpp", '''\
        #pragma once

        #include <cstddef>

        namespace acme::net {

        constexpr char kApiKey[] = "«api_key»";
        «max_len»
        «digest»

        bool connect(const char* host, std::size_t port);

        }  // namespace acme::net
        ''',
        api_key=g.s("generic_api_key", g.alnum(32)),
        max_len=g.l("password_constant", "constexpr int kPasswordMaxLen = 64;"),
        digest=g.l("sha256_digest", f'constexpr char kFirmwareSha256[] = "{g.hex(64)}";'),
    )


def _yaml(g: _Gen) -> None:
    k8s_stripe = base64.b64encode(g.stripe("sk_live_").encode()).decode()
    cert_block, cert_body = g.pem("CERTIFICATE", g.cert_der(), indent="    ")
    key_block, key_body = g.pem("RSA PRIVATE KEY", g.rsa_der(), indent="    ")
    g.write("deploy/k8s/secret.yaml", '''\
        apiVersion: v1
        kind: Secret
        metadata:
          name: shop-secrets
          namespace: shop
        type: Opaque
        stringData:
          password: «pw»
          api-token: «token»
        data:
          stripe-key: «b64»
        ---
        apiVersion: v1
        kind: Secret
        metadata:
          name: shop-tls
          namespace: shop
        type: kubernetes.io/tls
        stringData:
          tls.crt: |
            «cert»
          tls.key: |
            «key»
        ''',
        pw=g.s("generic_password", g.password()),
        token=g.s("generic_access_token", g.alnum(40)),
        b64=g.s("k8s_secret_data_base64", k8s_stripe),
        cert=g.l("certificate_pem", cert_body, block=cert_block),
        key=g.s("private_key_rsa", key_body, block=key_block),
    )

    g.write("deploy/helm/values.yaml", '''\
        replicaCount: 3
        image:
          repository: ghcr.io/acme/shop
          «digest»
        postgresql:
          auth:
            username: shop
            «empty»
            existingSecret: shop-db
        redis:
          auth:
            enabled: true
            password: «redis_pw»
        ''',
        digest=g.l("docker_digest", f"digest: sha256:{g.hex(64)}"),
        empty=g.l("empty_password", 'password: ""'),
        redis_pw=g.s("generic_password", g.password()),
    )

    g.write("deploy/helm/templates/deployment.yaml", '''\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Release.Name }}-web
        spec:
          replicas: {{ .Values.replicaCount }}
          template:
            spec:
              containers:
                - name: web
                  image: "{{ .Values.image.repository }}@{{ .Values.image.digest }}"
                  env:
                    - name: DB_PASSWORD
                      «tpl»
                    - name: API_TOKEN
                      valueFrom:
                        secretKeyRef:
                          name: shop-secrets
                          key: api-token
        ''',
        tpl=g.l("templated_password", "value: {{ .Values.password | quote }}"),
    )

    g.write("docker-compose.yml", '''\
        services:
          db:
            «image»
            environment:
              «env»
          rabbitmq:
            image: rabbitmq:3.13-management
            environment:
              RABBITMQ_DEFAULT_USER: orders
              RABBITMQ_DEFAULT_PASS: «rabbit_pw»
          minio:
            image: minio/minio
            environment:
              MINIO_ROOT_USER: shop
              MINIO_ROOT_PASSWORD: «minio_pw»
          web:
            build: .
            env_file: deploy/production.env
            depends_on: [db, rabbitmq, minio]
        ''',
        image=g.l("docker_digest", f"image: postgres:16@sha256:{g.hex(64)}"),
        env=g.l("templated_password", "POSTGRES_PASSWORD: ${DB_PASSWORD}"),
        rabbit_pw=g.s("generic_password", g.password()),
        minio_pw=g.s("generic_password", g.password()),
    )

    g.write("ci/pipeline.yml", '''\
        name: release
        on:
          push:
            tags: ["v*"]
        jobs:
          publish:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
              - run: npm ci && npm publish
                env:
                  «node_auth»
                  NPM_TOKEN_FALLBACK: «npm»
              - run: ./scripts/deploy.sh
                env:
                  GH_TOKEN: «ghs»
                  SONAR_TOKEN: "«sonar»"
        ''',
        node_auth=g.l("templated_secret", "NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}"),
        npm=g.s("npm_token", "npm_" + g.alnum(36), "npm_"),
        ghs=g.s("github_classic_token", "ghs_" + g.alnum(36), "ghs_"),
        sonar=g.s("sonarqube_token", "squ_" + g.hex(40), "squ_"),
    )

    g.write("config/app.yaml", '''\
        smtp:
          host: smtp.sendgrid.net
          port: 587
          username: apikey
          password: '«sendgrid»'
        payments:
          provider: adyen
          api_key: "«api_key»"
          webhook_secret: «webhook_secret»
        # Documentation sample for operators:
        docs_example:
          «placeholder»
          «empty»
        ''',
        sendgrid=g.s("sendgrid_api_key", f"SG.{g.chars(B64URL, 22)}.{g.chars(B64URL, 43)}", "SG."),
        api_key=g.s("generic_api_key", g.alnum(32)),
        webhook_secret=g.s("generic_secret", g.alnum(32)),
        placeholder=g.l("placeholder_password", "password: <password>"),
        empty=g.l("empty_password", 'api_key: ""'),
    )

    g.write("ansible/group_vars/all.yml", '''\
        ---
        app_user: shop
        «vault»
        mysql_root_password: «mysql_pw»
        heroku_api_key: «heroku»
        ntp_servers:
          - 0.pool.ntp.org
          - 1.pool.ntp.org
        ''',
        vault=g.l("templated_password", 'db_password: "{{ vault_db_password }}"'),
        mysql_pw=g.s("generic_password", g.password()),
        heroku=g.s("heroku_api_key", g.uuid()),
    )

    g.write("deploy/cloud-init.yaml", '''\
        #cloud-config
        users:
          - name: deploy
            groups: sudo
            shell: /bin/bash
            plain_text_passwd: «pw»
            ssh_authorized_keys:
              - «ssh_pub»
        package_update: true
        ''',
        pw=g.s("generic_password", g.password()),
        ssh_pub=g.l("ssh_public_key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.chars(B64, 43)} deploy@acme"),
    )


def _toml_json(g: _Gen) -> None:
    g.write("config/production.toml", '''\
        [server]
        host = "0.0.0.0"
        port = 8000

        [database]
        host = "db.internal.acme.example"
        user = "app"
        password = "«db_pw»"

        [stripe]
        secret_key = "«sk_live»"

        [smtp]
        user = "mailer"
        password = "«smtp_pw»"

        [oauth]
        client_id = "shop-web"
        client_secret = "«client_secret»"
        ''',
        db_pw=g.s("generic_password", g.password()),
        sk_live=g.s("stripe_live_secret_key", g.stripe("sk_live_"), "sk_live_"),
        smtp_pw=g.s("generic_password", g.password()),
        client_secret=g.s("generic_client_secret", g.alnum(40)),
    )

    g.write("pyproject.toml", '''\
        [project]
        name = "acme-shop"
        version = "2.4.0"
        requires-python = ">=3.11"
        dependencies = ["django>=5.0", "stripe>=8", "sqlalchemy>=2", "redis>=5"]

        [tool.ruff]
        line-length = 110
        ''')

    azure_secret = g.chars(ALNUM + "_~.", 3) + str(g.rng.randint(0, 9)) + "Q~" + g.chars(ALNUM + "_~.-", 34)
    g.write("config/appsettings.json", '''\
        {
          "ConnectionStrings": {
            "Storage": "DefaultEndpointsProtocol=https;AccountName=acmeshop;AccountKey=«azure»;EndpointSuffix=core.windows.net",
            "Db": "Server=tcp:acme.database.windows.net,1433;Database=shop;User ID=shop;Password=«ado_pw»;Encrypt=True;"
          },
          "AzureAd": {
            "Instance": "https://login.microsoftonline.com/",
            «client_id»,
            "ClientSecret": "«azure_ad»"
          },
          "Smtp": {
            "Host": "smtp.acme.example",
            «empty»
          }
        }
        ''',
        azure=g.s("azure_storage_account_key", g.b64(64)),
        ado_pw=g.s("connection_string_password", g.password("alnum")),
        client_id=g.l("uuid_id", f'"ClientId": "{g.uuid()}"'),
        azure_ad=g.s("azure_ad_client_secret", azure_secret),
        empty=g.l("empty_password", '"Password": ""'),
    )

    block, body = g.pem("PRIVATE KEY", g.pkcs8_der(), sep="\\n")
    g.write("deploy/gcp/service-account.json", '''\
        {
          "type": "service_account",
          "project_id": "acme-shop-prod",
          "private_key_id": "«key_id»",
          "private_key": "«key»\\n",
          "client_email": "uploader@acme-shop-prod.iam.gserviceaccount.com",
          "client_id": "«client_id»",
          "auth_uri": "https://accounts.google.com/o/oauth2/auth",
          "token_uri": "https://oauth2.googleapis.com/token"
        }
        ''',
        key_id=g.hex(40),
        key=g.s("gcp_service_account_key", body, block=block),
        client_id=g.digits(21),
    )

    hub = base64.b64encode(f"acmeci:{g.password('alnum')}".encode()).decode()
    ghcr = base64.b64encode(f"acme-bot:ghp_{g.alnum(36)}".encode()).decode()
    g.write("deploy/docker/config.json", '''\
        {
          "auths": {
            "https://index.docker.io/v1/": {
              "auth": "«hub»"
            },
            "ghcr.io": {
              "auth": "«ghcr»"
            }
          }
        }
        ''',
        hub=g.s("docker_config_auth", hub),
        ghcr=g.s("docker_config_auth", ghcr),
    )

    g.write("frontend/package.json", '''\
        {
          "name": "acme-shop-frontend",
          "private": true,
          "scripts": { "build": "webpack --mode production", "test": "vitest" },
          "dependencies": { "axios": "^1.7.2", "react": "^18.3.1" }
        }
        ''')

    g.write("frontend/package-lock.json", '''\
        {
          "name": "acme-shop-frontend",
          "lockfileVersion": 3,
          "packages": {
            "node_modules/axios": {
              "version": "1.7.2",
              "resolved": "https://registry.npmjs.org/axios/-/axios-1.7.2.tgz",
              «i1»
            },
            "node_modules/react": {
              "version": "18.3.1",
              "resolved": "https://registry.npmjs.org/react/-/react-18.3.1.tgz",
              «i2»
            }
          }
        }
        ''',
        i1=g.l("lockfile_integrity", f'"integrity": "sha512-{g.b64(64)}"'),
        i2=g.l("lockfile_integrity", f'"integrity": "sha512-{g.b64(64)}"'),
    )


def _env_props(g: _Gen) -> None:
    g.write("deploy/production.env", '''\
        DJANGO_SETTINGS_MODULE=webapp.settings
        DB_PASSWORD=«db_pw»
        HEROKU_API_KEY=«heroku»
        STRIPE_SECRET_KEY=«sk_live»
        REDIS_URL=rediss://default:«redis_pw»@cache.acme.example:6380/0
        OPENAI_API_KEY=«openai»
        AWS_ACCESS_KEY_ID=«akia»
        AWS_SECRET_ACCESS_KEY=«aws_secret»
        «sentry»
        GITHUB_PAT=«github_pat»
        DEBUG=false
        ''',
        db_pw=g.s("generic_password", g.password()),
        heroku=g.s("heroku_api_key", g.uuid()),
        sk_live=g.s("stripe_live_secret_key", g.stripe("sk_live_"), "sk_live_"),
        redis_pw=g.s("url_password(rediss)", g.url_password()),
        openai=g.s("openai_project_key", f"sk-proj-{g.chars(B64URL, 74)}T3BlbkFJ{g.chars(B64URL, 74)}", "sk-proj-"),
        akia=g.s("aws_access_key_id", g.aws_key_id(), "AKIA"),
        aws_secret=g.s("aws_secret_access_key", g.aws_secret()),
        sentry=g.l("sentry_dsn", f"SENTRY_DSN=https://{g.hex(32)}@o{g.digits(6)}.ingest.sentry.io/{g.digits(7)}"),
        github_pat=g.s("github_fine_grained_pat", f"github_pat_{g.alnum(22)}_{g.alnum(59)}", "github_pat_"),
    )

    g.write("deploy/example.env", '''\
        # Copy to production.env and fill in.
        «db»
        «secret»
        «api»
        «akia»
        «aws»
        DEBUG=true
        ''',
        db=g.l("placeholder_password", "DB_PASSWORD=changeme"),
        secret=g.l("placeholder_password", "SECRET_KEY=xxxxxxxx"),
        api=g.l("empty_password", "API_KEY="),
        akia=g.l("aws_documented_example", f"AWS_ACCESS_KEY_ID={AWS_EXAMPLE_KEY_ID}"),
        aws=g.l("aws_documented_example", f"AWS_SECRET_ACCESS_KEY={AWS_EXAMPLE_SECRET}"),
    )

    g.write("android/gradle.properties", '''\
        org.gradle.jvmargs=-Xmx2048m -Dfile.encoding=UTF-8
        android.useAndroidX=true
        RELEASE_STORE_FILE=release.keystore
        RELEASE_STORE_PASSWORD=«store_pw»
        RELEASE_KEY_ALIAS=acme
        RELEASE_KEY_PASSWORD=«key_pw»
        MAPS_API_KEY=«aiza»
        ''',
        store_pw=g.s("generic_password", g.password()),
        key_pw=g.s("generic_password", g.password()),
        aiza=g.s("google_api_key", "AIza" + g.chars(B64URL, 35), "AIza"),
    )

    g.write("docker/npmrc", '''\
        registry=https://registry.npmjs.org/
        //registry.npmjs.org/:_authToken=«legacy»
        @acme:registry=https://npm.pkg.github.com
        //npm.pkg.github.com/:_authToken=«ghp»
        always-auth=true
        ''',
        legacy=g.s("npmrc_auth_token", g.uuid()),
        ghp=g.s("github_classic_token", "ghp_" + g.alnum(36), "ghp_"),
    )

    g.write("deploy/pypirc", '''\
        [distutils]
        index-servers =
            pypi

        [pypi]
        username = __token__
        password = «pypi»
        ''',
        pypi=g.s("pypi_upload_token", "pypi-AgEIcHlwaS5vcmc" + g.b64url(130), "pypi-AgEIcHlwaS5vcmc"),
    )

    g.write("config/alembic.ini", '''\
        [alembic]
        script_location = migrations
        sqlalchemy.url = postgresql://alembic:«pw»@db.internal.acme.example/shop

        [loggers]
        keys = root
        ''',
        pw=g.s("url_password(postgresql)", g.url_password()),
    )

    g.write("config/supervisord.conf", '''\
        [inet_http_server]
        port = 127.0.0.1:9001
        username = admin
        password = «pw»

        [program:worker]
        command = celery -A webapp worker
        «env»
        ''',
        pw=g.s("generic_password", g.password()),
        env=g.l("templated_password", 'environment = BROKER_PASSWORD="%(ENV_BROKER_PASSWORD)s"'),
    )


def _docker_shell(g: _Gen) -> None:
    g.write("Dockerfile", '''\
        «from»
        ARG GITHUB_TOKEN=«ghp»
        ENV NPM_TOKEN «npm»
        ENV DATABASE_PASSWORD=«pw»
        «pw_file»
        WORKDIR /app
        COPY docker/npmrc /root/.npmrc
        COPY . .
        RUN pip install --no-cache-dir . && npm ci --prefix frontend && rm /root/.npmrc
        CMD ["gunicorn", "webapp.wsgi", "-b", "0.0.0.0:8000"]
        ''',
        **{"from": g.l("docker_digest", f"FROM python:3.11-slim@sha256:{g.hex(64)}")},
        ghp=g.s("github_classic_token", "ghp_" + g.alnum(36), "ghp_"),
        npm=g.s("npm_token", "npm_" + g.alnum(36), "npm_"),
        pw=g.s("generic_password", g.password()),
        pw_file=g.l("templated_password", "ENV PASSWORD_FILE=/run/secrets/db_password"),
    )

    g.write("services/gateway/Dockerfile", '''\
        FROM golang:1.22 AS build
        WORKDIR /src
        COPY . .
        RUN CGO_ENABLED=0 go build -o /gateway .

        FROM gcr.io/distroless/static
        ENV API_SECRET «secret»
        COPY --from=build /gateway /gateway
        ENTRYPOINT ["/gateway"]
        ''',
        secret=g.s("generic_secret", g.alnum(32)),
    )

    g.write("scripts/deploy.sh", '''\
        #!/usr/bin/env bash
        set -euo pipefail

        export HEROKU_API_KEY=«heroku»
        export AWS_ACCESS_KEY_ID=«akia»
        export AWS_SECRET_ACCESS_KEY=«aws_secret»
        «db»

        python -m build
        TWINE_PASSWORD=«pypi» TWINE_USERNAME=__token__ twine upload dist/*
        curl -fsS -X POST -H "Authorization: Bearer «bearer»" https://deploy.acme.example/api/releases
        «checkout»
        heroku container:release web --app acme-shop
        ''',
        heroku=g.s("heroku_api_key", g.uuid()),
        akia=g.s("aws_access_key_id", g.aws_key_id(), "AKIA"),
        aws_secret=g.s("aws_secret_access_key", g.aws_secret()),
        db=g.l("templated_password", 'export DB_PASSWORD="${DB_PASSWORD:?set DB_PASSWORD}"'),
        pypi=g.s("pypi_upload_token", "pypi-AgEIcHlwaS5vcmc" + g.b64url(130), "pypi-AgEIcHlwaS5vcmc"),
        bearer=g.s("bearer_token", g.b64url(30)),
        checkout=g.l("git_commit_sha", f"git -C vendor/theme checkout {g.hex(40)}"),
    )

    g.write("scripts/backup.sh", '''\
        #!/bin/sh
        set -eu
        mysqldump -u root -p'«mysql_pw»' shop | gzip > /backups/shop.sql.gz
        «digest»
        curl -T /backups/shop.sql.gz ftp://backup:«ftp_pw»@ftp.acme.example/dumps/
        git clone https://deploy:«https_pw»@git.acme.example/acme/infra.git /tmp/infra
        ''',
        mysql_pw=g.s("cli_password_flag", g.password("alnum")),
        digest=g.l("sha256_digest", f'echo "{g.hex(64)}  /backups/schema.sql" | sha256sum -c -'),
        ftp_pw=g.s("url_password(ftp)", g.url_password()),
        https_pw=g.s("url_password(https)", g.url_password()),
    )

    g.write("scripts/bootstrap.sh", '''\
        #!/usr/bin/env bash
        set -euo pipefail
        git clone https://oauth2:«glpat»@gitlab.com/acme/platform.git
        curl -fsS -u "admin:«jenkins_pw»" https://jenkins.acme.example/api/json
        export SLACK_BOT_TOKEN=«xoxb»
        «vault»
        ''',
        glpat=g.s("gitlab_pat", "glpat-" + g.chars(B64URL, 20), "glpat-"),
        jenkins_pw=g.s("curl_user_password", g.password("alnum")),
        xoxb=g.s("slack_bot_token", g.slack_bot(), "xoxb-"),
        vault=g.l("templated_password", "export DB_PASSWORD=$(vault kv get -field=password secret/shop/db)"),
    )


def _docs_xml_keys(g: _Gen) -> None:
    g.write("README.md", '''\
        # acme-shop

        The shop: Django back office, TypeScript storefront, Go services.

        ## Local setup

        Configure AWS credentials (these are AWS's documented example values):

            «akia»
            «aws»

        In `config/app.yaml`, set `«placeholder»` for the SMTP relay.

        Call the API:

            curl -H "«bearer»" https://api.acme.example/v1/orders
        ''',
        akia=g.l("aws_documented_example", f"AWS_ACCESS_KEY_ID={AWS_EXAMPLE_KEY_ID}"),
        aws=g.l("aws_documented_example", f"AWS_SECRET_ACCESS_KEY={AWS_EXAMPLE_SECRET}"),
        placeholder=g.l("placeholder_password", "password: <password>"),
        bearer=g.l("placeholder_bearer", "Authorization: Bearer YOUR_API_TOKEN"),
    )

    basic = base64.b64encode(f"ops:{g.password('symbols')}".encode()).decode()
    docs_jwt, head = g.jwt("RS256")
    g.write("docs/api.md", '''\
        # Orders API

        ## Authentication

        Example request (captured on staging):

        ```sh
        curl -H "Authorization: Basic «basic»" https://staging.acme.example/api/v1/orders
        curl -H "Authorization: Bearer «jwt»" https://staging.acme.example/api/v1/me
        ```

        A decoded token looks like jwt.io's sample, `«jwt_io»`.

        Orders are addressed by UUID, for example `«order»`.
        ''',
        basic=g.s("basic_auth_header", basic),
        jwt=g.s("jwt", docs_jwt, head),
        jwt_io=g.l("jwt_io_sample", JWT_IO_SAMPLE),
        order=g.l("uuid_id", f"/api/v1/orders/{g.uuid()}"),
    )

    g.write("CHANGELOG.md", '''\
        # Changelog

        ## 2.4.0

        - Fix the expiry of «reset».
          Commit «sha1».
        - Checkout retries card authorisation once.
          Commit «sha2».
        ''',
        reset=g.l("function_name", "`reset_password_token`"),
        sha1=g.l("git_commit_sha", g.hex(40)),
        sha2=g.l("git_commit_sha", g.hex(40)),
    )

    g.write("backend/settings.xml", '''\
        <settings>
          <servers>
            <server>
              <id>acme-releases</id>
              <username>deployer</username>
              <password>«pw»</password>
            </server>
            <server>
              <id>acme-snapshots</id>
              <username>${env.MAVEN_USER}</username>
              «tpl»
            </server>
          </servers>
        </settings>
        ''',
        pw=g.s("generic_password", g.password()),
        tpl=g.l("templated_password", "<password>${env.MAVEN_PASSWORD}</password>"),
    )

    g.write("backend/src/main/resources/hibernate.cfg.xml", '''\
        <?xml version="1.0" encoding="utf-8"?>
        <hibernate-configuration>
          <session-factory>
            <property name="hibernate.connection.driver_class">com.mysql.cj.jdbc.Driver</property>
            <property name="hibernate.connection.url">jdbc:mysql://db.internal.acme.example:3306/shop?user=shop&amp;password=«jdbc_pw»</property>
            <property name="hibernate.connection.username">shop</property>
            <property name="hibernate.connection.password">«pw»</property>
          </session-factory>
        </hibernate-configuration>
        ''',
        jdbc_pw=g.s("jdbc_password", g.url_password()),
        pw=g.s("generic_password", g.password()),
    )

    g.write("android/app/src/main/res/values/secrets.xml", '''\
        <?xml version="1.0" encoding="utf-8"?>
        <resources>
            <string name="google_maps_key">«aiza»</string>
            <string name="facebook_app_secret">«fb»</string>
            «hint»
        </resources>
        ''',
        aiza=g.s("google_api_key", "AIza" + g.chars(B64URL, 35), "AIza"),
        fb=g.s("generic_secret", g.hex(32)),
        hint=g.l("i18n_string", '<string name="password_hint">Enter your password</string>'),
    )

    block, body = g.pem("OPENSSH PRIVATE KEY", g.openssh_der(), width=70)
    g.write("keys/deploy_key", "«key»\n", key=g.s("private_key_openssh", body, block=block))

    block, body = g.pem("RSA PRIVATE KEY", g.rsa_der())
    g.write("config/jwt_private.pem", "«key»\n", key=g.s("private_key_rsa", body, block=block))

    block, body = g.pem("PUBLIC KEY", g.rsa_public_der())
    g.write("config/jwt_public.pem", "«key»\n", key=g.l("public_key_pem", body, block=block))


_WRITERS = (_python, _typescript, _javascript, _go, _java, _rust_c, _yaml, _toml_json, _env_props, _docker_shell, _docs_xml_keys)
