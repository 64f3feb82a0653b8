//! Language detection by file name, and the tree-sitter grammar of each.

/// The file name's extension, lower case ("" for none or a dot file).
pub fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(i) if i > 0 => name[i + 1..].to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// Languages with a grammar; everything else is `Text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Rust,
    Go,
    Java,
    C,
    Cpp,
    Markdown,
    Text,
}

impl Lang {
    /// Every language, in a fixed order.
    pub const ALL: [Lang; 11] = [
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Rust,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::Markdown,
        Lang::Text,
    ];

    /// Detect from the file name.
    pub fn detect(path: &str) -> Lang {
        match extension(path).as_str() {
            "py" | "pyi" | "pyw" => Lang::Python,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "rs" => Lang::Rust,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "inl" | "tcc" => {
                Lang::Cpp
            }
            "md" | "markdown" | "mdx" => Lang::Markdown,
            _ => Lang::Text,
        }
    }

    /// The id stored in the `language` columns.
    pub fn id(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Rust => "rust",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Markdown => "markdown",
            Lang::Text => "text",
        }
    }

    pub fn from_id(id: &str) -> Lang {
        match id {
            "python" => Lang::Python,
            "javascript" => Lang::JavaScript,
            "typescript" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "rust" => Lang::Rust,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" => Lang::C,
            "cpp" => Lang::Cpp,
            "markdown" => Lang::Markdown,
            _ => Lang::Text,
        }
    }

    /// True for languages parsed into symbols.
    pub fn is_code(self) -> bool {
        !matches!(self, Lang::Markdown | Lang::Text)
    }

    pub fn is_js_like(self) -> bool {
        matches!(self, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
    }

    /// The tree-sitter grammar (block grammar for Markdown).
    pub fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Markdown => tree_sitter_md::LANGUAGE.into(),
            Lang::Text => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_and_round_trips() {
        assert_eq!(Lang::detect("a/b.py"), Lang::Python);
        assert_eq!(Lang::detect("x.h"), Lang::C);
        assert_eq!(Lang::detect("Makefile"), Lang::Text);
        assert_eq!(Lang::detect(".bashrc"), Lang::Text);
        for l in [
            Lang::Python,
            Lang::Tsx,
            Lang::Cpp,
            Lang::Markdown,
            Lang::Text,
        ] {
            assert_eq!(Lang::from_id(l.id()), l);
        }
    }

    #[test]
    fn every_grammar_loads() {
        for l in Lang::ALL.into_iter().filter(|l| *l != Lang::Text) {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&l.grammar().unwrap()).unwrap();
        }
    }
}
