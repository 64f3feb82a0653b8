//! The on-disk contract of a code-index snapshot: table schemas, the manifest,
//! and the version numbers. The builder writes with these definitions, the
//! server reads with them, and `SCHEMA.md` documents them (a test keeps the
//! three in step). A column is renamed here and nowhere else.
//!
//! # Version history
//! `SCHEMA_VERSION` changes when a reader of the previous version could not
//! read the new files (a column renamed, removed or retyped).
//! `FEATURE_VERSION` changes when the same schema is filled differently (new
//! languages, better extraction), so snapshots should be rebuilt but old
//! readers still work.
//!
//! - schema 1, feature 1: first release (files, chunks, symbols, references, edges).
//! - schema 1, feature 2: `vectors.faiss` (embeddings), `patterns.parquet`,
//!   and `mentions` edges from navigation docs.
//! - schema 1, feature 3: `files.content_sha256` hashes the published
//!   (redacted) content, never a secret; wider secret detection.
//! - schema 1, feature 4: chunk spans include a definition's leading doc
//!   comments, attributes, annotations and decorators (its chunk starts at
//!   them; the block before it shrinks); `symbols.doc` is also found
//!   above Rust attributes, TypeScript member decorators and JS `const`s.
//! - schema 1, feature 5: `ngrams.bin`, the n-gram index grep plans
//!   against (format and its own version history in [`ngram`]).
//! - schema 1, feature 6: `keywords.bin`, the keyword (BM25) index of the
//!   chunks, read in place by `search_code` (format in [`keyword`]).
//! - schema 1, feature 7: package managers' lock files (`Cargo.lock`,
//!   `package-lock.json`, …) are `files.is_generated` (no chunks, no
//!   vectors); vectors follow input recipe v3 (the manifest's
//!   `embeddings.input`).
//! - schema 1, feature 8: code in a language without a grammar here
//!   (Kotlin, Scala, Swift, Ruby, Elixir, PHP, C#, ...) has definitions
//!   read from its layout (`symbols`, language `text`), and its windows of
//!   lines end where one starts.
//! - schema 1, feature 9: a definition too small for a chunk of its own
//!   that stands alone between larger ones (a two-line class, a one-line
//!   method) is its own `definition` / `method` chunk named after it, where
//!   it was a `block` named after its container or nothing.
//! - schema 1, feature 10: `heads.bin`, a keyword index over definition
//!   heads and the chunks each starts in, read in place by `search_code`'s
//!   `head` stage (format in [`heads`]).
//! - schema 1, feature 11: Go calls follow Go's scoping: `edges.dst_name`
//!   keeps what a call selects from (`net.Listen`, `srv.Serve`), `pkg.F`
//!   resolves only into the package imported as `pkg`, `x.M` only to a
//!   method, a bare name only within the file's own package.
//! - schema 1, feature 12: Python, JavaScript/TypeScript and Rust calls
//!   too: `dst_name` keeps the receiver or path (`self.save`, `this.next`,
//!   `Type::new`); `self.m` resolves to the caller's own class, `super`
//!   calls and names the repository does not define (builtins, std, std
//!   macros) stay unresolved, a bare call never lands on a method, and no
//!   call crosses language families.
//! - schema 1, feature 13: a Rust macro call's `dst_name` ends in `!`
//!   (`tri!`, `Token!`) and resolves only to a macro, within the caller's
//!   crate; the items inside an item-level macro call's body (`cfg_rt! {
//!   pub fn spawn … }`) are symbols and chunks; a Python `from P import X`
//!   lends its package to `X()` alone; `super().m` / `super.m` resolve to
//!   the nearest base class defining `m`.
//! - schema 1, feature 14: a Rust call through a module path (`time::sleep`,
//!   `tokio::spawn`, `crate::util::f`) resolves where the compiler finds
//!   it: the module the path names (through the caller's `use` of its first
//!   segment), then the `use` items that module re-exports the function by
//!   (`pub use sleep::sleep;`, `pub use self::bounded::*;`), up to three
//!   hops, into other crates of the repository too; a Rust 2018 relative
//!   `use sleep::sleep;` resolves to the child module.
//! - schema 1, feature 15: a call through a local name (`x.m()`, Python and
//!   Rust) resolves by the type the name's binding names: a parameter's
//!   annotation (`cx: &mut Context<'_>`, `form: Form`), a struct literal,
//!   a constructor's result (`Foo::new()`, `Foo::open()?` by the return
//!   type; Python `Form(…)`, a class), looked up in that type (Python: and
//!   its bases; Rust: the type a `use` names; a Rust field of `self`, its
//!   declared type); a type the repository does not define (std's `Vec`,
//!   a builtin, a library's class) leaves the call unresolved. The new nullable column `edges.receiver_type` holds the
//!   binding as written (a reader of feature 14 ignores it). A Python base
//!   class is found through the import of its name or module
//!   (`models.Model` with `from app import models`), for `self.m()` and
//!   `super()` calls too.
//! - schema 1, feature 16: renamed imports are followed. The new nullable
//!   column `edges.alias` holds the name an import binds when it renames
//!   (Python `import a.b as c` and `from m import C as D`, Rust
//!   `use a::b as c`, Go `import f "fmt"`, JS/TS `import * as ns`; `*` for
//!   Python's `from m import *`, followed through packages); a call,
//!   base or receiver type written through that name resolves through the
//!   import (`_("…")` to `gettext_lazy`, `capi.get_ds_name()` to the module
//!   imported as `capi`, `class Loader(BaseLoader)` to the imported
//!   `Loader`), looked up in the file the import resolves to before any
//!   rule by name (a name not found there falls back to those rules).
//! - schema 1, feature 17: a Python call through an attribute of the
//!   instance (`self.client.get()`, `cls.x.m()`) carries in
//!   `edges.receiver_type` the one type the class assigns to it: in its
//!   methods `self.client = Client()`, `self.x: T = …`, `self.x = param`
//!   of an annotated parameter, `cls.x = Foo()` in a classmethod; in its
//!   body `rf = RequestFactory()`, `x: Foo` (`None` says nothing; two
//!   types, an untyped value, a tuple target, `+=` or a nested function's
//!   assignment none), and resolves by it as a local's binding does,
//!   unless the type is a descriptor's (`__get__`) or a Django field's
//!   (`contribute_to_class`), which instances do not read. A Python
//!   receiver typed by a dotted class of a module outside the repository
//!   (`threading.Event()`) leaves the call unresolved even when the
//!   repository has a class of that name.
//! - schema 1, feature 18: edges of the new kind `attribute` (Python),
//!   one per attribute a class assigns to its instances (in its methods,
//!   classmethods or body): `src_symbol` the class, `dst_name` the
//!   attribute, `line` its first assignment, `receiver_type` the one type
//!   its values show (as feature 17 reads them; a CamelCase name held as a value,
//!   `client_class = Client`, is `type[Client]`, and `self.client_class()`
//!   an instance of the class that attribute holds), `dst_path` /
//!   `dst_symbol_id` that type's class when the file's scope finds it. A
//!   call `self.x.m()` whose caller's class assigns no `x` resolves
//!   through the nearest class of its MRO that does (`self.client.get()`
//!   in a subclass of Django's `SimpleTestCase`), the type read where
//!   that class is written and `self.factory()` looked up from the
//!   caller's class (a subclass's own `client_class` wins); such a call
//!   stores no `receiver_type`.
//! - schema 1, feature 19: a Go call `x.M()` through a local name whose
//!   binding names a type resolves in that type (its method, or one a type
//!   it embeds promotes, nearest first); `edges.receiver_type` holds the
//!   binding as written: a parameter's or receiver's type (`*testing.T`),
//!   `var x T`, `T{…}`, `&T{…}` (`*T`), `new(T)` (`*T`), or the call whose
//!   first result it is, read from the function's signature (`os.Open()`,
//!   `(*Loader).toLocal()` for a method of a typed local). A builtin type
//!   (`error`) or a type of a package outside the repository leaves the
//!   call unresolved; of a method each platform's file defines
//!   (`file_plan9.go`, `file_posix.go`), the caller's platform's, else an
//!   untagged file's, is taken.
//! - schema 1, feature 20: a Go call through a field of a typed local
//!   (`s.mu.Lock()`, `p.log.Write()`) resolves in the field's declared
//!   type, read in its struct's file (a field a type it embeds promotes
//!   counts, and an embedded type is a field of its own name);
//!   `edges.receiver_type` writes it `(*Server).mu` (`((T).a).b` deeper);
//!   `v := x`, `v := x.f` and `v := x.f.M()` take the local's, the
//!   field's and the method's result type. A Go import found nowhere else
//!   resolves to `vendor/<path>` in the importing file's directory or the
//!   nearest above it (go-stdlib's `src/vendor/golang.org/x/…`). Of a type
//!   each platform's file defines, the caller's platform's is taken, as
//!   for methods; between files for other platforms, linux's and amd64's
//!   (`_bsd`, `_ppc64x`, `_mipsx`, `_mips64x` count as tags).
//! - schema 1, feature 21: a Go call whose receiver is a value, not a name
//!   (`new(big.Int).SetBytes()`, `T{}.M()`, `(&T{}).M()`,
//!   `reflect.ValueOf(x).Elem()`, `b.Logger().Reset()`), resolves in the
//!   value's type; `edges.receiver_type` writes it as a binding of that
//!   value would (`*big.Int`, `reflect.ValueOf()`, `(*Buffer).Logger()`).
//! - schema 1, feature 22: a Go call through a name the function does not
//!   bind nor the file import (`mu.Lock()`), or through an imported
//!   package's variable (`binary.BigEndian.Uint32()`), resolves in the type of the package-level variable (or constant) of
//!   that name, as its declaration shows it (`var x T`, `= T{…}`,
//!   `= &T{…}`, `= new(T)`, `= F(…)`); `edges.receiver_type` writes it
//!   `var mu` / `var binary.BigEndian` (`(var x).f` through a field). A
//!   function literal outside any function (a test table's `func() {…}`)
//!   binds its own names: its `var x T` is no longer a package-level
//!   `variable` symbol.
//! - schema 1, feature 23: TypeScript the pinned grammar does not parse
//!   (variance annotations `<out A>`, a generic call signature on the line
//!   after another member, an escaped backtick in a template literal type)
//!   is parsed as a length- and line-preserving rewrite, so the symbols,
//!   edges and chunks around it are no longer lost to error recovery
//!   (effect 3.10: 185 of 360 files parsed with errors).
//! - schema 1, feature 24: a JavaScript/TypeScript call `x.m()` through a
//!   local name resolves in the class or interface its binding names (a
//!   parameter's or declarator's annotation, `new Foo(…)`, `… as Foo`), or
//!   its nearest `extends` base; `edges.receiver_type` shows it (`Subscriber`,
//!   `ns.Circle`, `Circle()` for an instance of `new Circle()`). A type the
//!   repository does not define (`Map`, `Promise`) leaves it unresolved.
//! - schema 1, feature 25: a JavaScript/TypeScript bare call `f()` of a name
//!   the function (or a function around it) binds, a parameter or a local
//!   `const`/`let` (a callback's parameters within the callback), carries
//!   `receiver_type` `local` and resolves only to a
//!   function defined there (`outer.loop`), not to a function of that name
//!   elsewhere; a closure sees the typed bindings around it; an interface
//!   or type alias merged with a function of its name is no call's target.
//! - schema 1, feature 26: a JavaScript/TypeScript call `this.x.m()`
//!   resolves in the type the class gives field `x` (a declaration's
//!   annotation, which assigned values do not change; `x = new Foo()`; a
//!   constructor's parameter property; `this.x = …` in a method), or a base
//!   class's field; each such field is an `attribute` edge. A name imported
//!   from a barrel (a file of `export … from` only: `index.ts`,
//!   `internal.ts`) is found in the files it re-exports, up to four barrels
//!   deep; `..`
//!   names the index of the directory above; a callback outside any
//!   function (`describe(() => { let c: Client … })`) binds typed names.
//! - schema 1, feature 27: a JavaScript/TypeScript callback's untyped
//!   parameter takes the type the called function's signature gives it
//!   (`operate((source, subscriber) => …)` with `init: (source:
//!   Observable<T>, subscriber: Subscriber<R>) => void`; `receiver_type`
//!   `operate(#0).#1`), or the call's last type argument (`dual<…, (self:
//!   Ref<A>) => …>(2, (self) => …)`); a parameter named `self` is a name
//!   like any other, so `self: Ref<A>` types `self.modify()`. A call of a
//!   name a callback outside any function binds (a UMD factory's `var f =
//!   function f(…)`), from a function inside it, resolves by name when the
//!   file defines one function of that name (feature 26 left it unresolved).
//! - schema 1, feature 28: a JavaScript/TypeScript receiver that is an
//!   expression is typed segment by segment from TypeScript's declared
//!   return types and the fields' types: `client.getCache().find()` through
//!   a typed local (`receiver_type` `<Client>`, the type of its first name),
//!   `innerFrom(x).subscribe()`, `this.#client.getCache().notify()`, a
//!   method returning `this`.
//! - schema 1, feature 29: a JavaScript/TypeScript local bound to a call's
//!   result (`const cache = client.getCache()`, `const q = this.#cache.get(k)`,
//!   `const o = makeClient()`) is typed as feature 28 types that expression;
//!   `receiver_type` `=expr` (`=<Client>client.getCache()` when its first name
//!   is a local typed `Client`).
//! - schema 1, feature 30: Go receivers typed by elements, assertions and
//!   type switches: `receiver_type` `(xs)[]` (a range's value, `xs[i]`,
//!   `<-ch`, `make([]T, n)`'s element), `(xs)[key]` (a range's first name:
//!   a map's key, a channel's element), a type assertion's type (`x.(*T)`,
//!   `v, ok := x.(*T)`), a type switch's case of one type, `(v).M()` for a
//!   method's result of a value that is no name; a type alias is followed;
//!   an inline struct type's fields are read (Go types are written on one
//!   line, fields separated by `; `); a name is in sight from after its
//!   declaration to the end of its block.
//! - schema 1, feature 31: Rust calls on a receiver of unknown type are no
//!   longer taken for a method of the calling file, nor for the crate's one
//!   method of a name std's types define; `self.a.b.m()` is not typed by
//!   `self.a`; a call of a name that is both a function and a type is the
//!   function's; `self.a.m()` reads `a`'s type where the crate defines the
//!   struct; a smart pointer's std-trait method is std's; a type alias
//!   stands for the type it names (judged by rust-analyzer: 21.7 % of
//!   resolved Rust calls pointed elsewhere before, 3.1 % after; right
//!   31,644 -> 32,203).
//! - schema 1, feature 32: Python names read as Python reads them: a
//!   receiver or base whose first name an import binds, module by module
//!   and class by class (`models.Manager`, `signals.post_save.connect`
//!   through the variable `post_save = ModelSignal(…)`); a bare name an
//!   import binds through that module's re-exports (`path = partial(…)`), or
//!   nothing when the module is outside; a nested function or class seen
//!   only from around it; `self` in a closure is the method's; no method of
//!   a builtin type's name (`extend`, `get`) by name on an untyped receiver;
//!   a base made by a call is written `f()` (Jedi on a 3,000-call sample of
//!   django: resolved elsewhere 37 -> 19, right 1,136 -> 1,192).
//! - schema 1, feature 33: a Rust receiver that is an associated function's
//!   call (`ThreadPoolBuilder::new().num_threads(…)`, `Finder::new(n)?.find(…)`)
//!   is typed as a local bound to it is, and a receiver that is a method's
//!   or function's call by the type its signature declares (`Self`, `Ignore`,
//!   `T` of `Result<T, _>` with `?`); a path through a module another crate
//!   holds is not (rust-analyzer on rust-crates: right 32,203 -> 33,218,
//!   elsewhere 394 -> 397).
//! - schema 1, feature 34: a Rust local bound to a call's result (`let rt =
//!   rt();`, `let p = Builder::new().build().unwrap();`, `let s =
//!   open(a).await?;`) and a receiver that is one, over however many lines,
//!   are `=expr` (`=<T>expr` when its first name is a local typed `T`),
//!   typed at resolution by the declared return types of what it calls
//!   (`.unwrap()`, `.expect(…)`, `.unwrap_or…(…)` read as `?`, `.await`
//!   dropped); a `let`'s name is in sight after its statement (`let e =
//!   e.build();`).
//! - schema 1, feature 35: a Rust generic parameter (`t: T`, `&mut S`, a
//!   field `self.base` of type `C`) is what its bounds name (`<T: Runner>`,
//!   `where C: Consumer<T>`; `impl A + B`, std's markers and `Fn` traits
//!   left out), its trait's method or a supertrait's (rust-analyzer on
//!   rust-crates with features 34 and 35, serde_core read as serde: right
//!   33,222 -> 36,145, elsewhere 431 -> 393).
//! - schema 1, feature 36: a Rust associated function returning another
//!   type than its own (`DFA::config() -> Config`, `Pool::builder() ->
//!   PoolBuilder`) types its call's value by that type, read where the
//!   signature is written, in the caller's crate (right 36,145 -> 36,254).
//! - schema 1, feature 37: a Rust receiver that reads fields on the way
//!   (`self.shared.inject.push(…)`, `path.segments.first()`,
//!   `self.raw.header().state.load()`) is typed left to right, each field by
//!   its struct's declaration (`=<T>x.a.b` for a typed local's, `let s =
//!   &self.shared;` → `=self.shared`); a type name the crate gives several
//!   types only where the field's struct is written (right 36,254 ->
//!   36,522, elsewhere 393 -> 396).
//! - schema 1, feature 38: Rust names in sight as Rust scopes them: a
//!   `let`'s to the end of its block, a pattern's names (`let (a, b)`, a
//!   `match` arm's, `if let`, a closure's) untyped and hiding an outer one,
//!   `if let Some(x) = v` binding `x` to `v?`; a module's function's value
//!   (`util::make()`) typed as any call's, a trait method's declared return
//!   read past its `;`, `x.unwrap()` of a typed local, a generic field's
//!   bound matched with the `impl`'s arguments by position (right 36,522 ->
//!   36,588, elsewhere 396 -> 395).
//! - schema 1, feature 39 (a second review): an `if let`'s names are its
//!   block's, not its `else`'s, a `for`'s its body's; `let Some(p) = v
//!   else { … }` binds `p` to `v?`; a field's struct placed through the
//!   file's `use` and taken only when it is the one (or all candidates
//!   declare the field with one type); a field followed by `?`; what a
//!   smart pointer holds (`Arc::new(x)`, `Pin::new(&mut self.io)`) stands
//!   for it and `.clone()` for its receiver; an `impl`'s parameters read past
//!   a bound's `->` (right 36,588 -> 36,755, elsewhere 395 -> 393).
//! - schema 1, feature 40 (a third review): a method a smart pointer
//!   answers itself (`Arc::new(x).clone()`, `Pin::new(…).set(…)`) is not
//!   what it holds; a crate with a `clone` returning another type keeps its
//!   `.clone()` calls for their signature; several structs of one name give
//!   a field's type only within one file; an `impl`'s parameters that do not
//!   show give no bound (rust-crates: right 36,755, elsewhere 393).
//! - schema 1, feature 41: a name a Rust pattern binds in a tuple-struct or
//!   struct pattern (`Kind::Run(p)`, `State::Look { next, .. }`, `Id(x)`,
//!   nested, `Self::V`) is typed by its slot (`~P#i`, `~P#f`), which
//!   resolution reads from the declaration: a tuple struct's or tuple
//!   variant's fields, now kept as `.0`, `.1` … (so `self.0.m()` is typed
//!   too), a struct's or struct variant's field; a type path from a crate
//!   the index does not hold (`walkdir::DirEntry`), or through `use
//!   std::sync::{self}`, names none of the index's types (rust-crates:
//!   right 36,755 -> 37,571, elsewhere 393 -> 397, resolved into the
//!   crates where rust-analyzer puts the call outside 604 -> 584).
//! - schema 1, feature 42: `let (a, b) = v` binds each name to its element
//!   (`=v.0`, `=v.1`), typed through a signature declaring a tuple (`->
//!   (Sender<T>, Receiver<T>)`, `-> io::Result<(A, B)>` with `?`); a
//!   `match` arm's `Some(x)` / `Ok(x)` binds `x` to `=v?` of the `match`'s
//!   value, and its tuple pattern as a `let`'s; a path's turbofish
//!   (`oneshot::channel::<i32>()`) names the function; of a module's item
//!   and an enum's variant of one name, a bare call or `use` names the item
//!   (rust-crates: right 37,571 -> 37,988, elsewhere 397 -> 388).
//! - schema 1, feature 43: a Rust path through a generic parameter
//!   (`T::opt_len(…)`) is its bounds' function (`receiver_type` `impl
//!   RangeInteger`); `<T as Parser>::parse` is `Parser::parse`; a type's
//!   turbofish (`Foo::<i64>::new`) is no part of its name, but a std
//!   type's (`Box::<dyn Error>::from`) leaves the call unresolved; a macro
//!   through a crate's path (`tokio::join!`, `$crate::m!`) is that crate's
//!   (several outside the caller's directory: none), and a `macro_rules!`
//!   of std's name (`assert_eq!`) in the calling file's module around the
//!   caller shadows std's (rust-crates: right 37,988 -> 38,640, elsewhere
//!   388 -> 389).
//! - schema 1, feature 44: a Rust `for x in v` (`&self.items`, `xs.iter()`)
//!   binds `x` to an element of `v` (`=v[]`, `=<Vec<Item>>v[]`), typed from
//!   `v`'s declared type (`Vec<T>`, `[T]`, `Option<T>`, the sets, `Box<[T]>`);
//!   `let a = b;` of a local gives `a` the type of `b` (rust-crates: right
//!   38,640 -> 38,666).
//! - schema 1, feature 45 (a review of 41-44): a slot's type declared in
//!   another file whose name the crate gives several types is not read in
//!   the caller's file (none); a tuple struct's fields are read past
//!   comments; a bare name an enum's glob or `use` brings in is its variant
//!   when no `use` names an item of that name; `crate::m!` of several
//!   macros is the crate root's (the crate: the directory above `src/`,
//!   `tests/`…); a nested function sees none of the outer's generic
//!   parameters; a path type with a capitalized head (`T::Item`) is no other
//!   crate's (rust-crates: right 38,666 -> 38,659, elsewhere 389 -> 387).
//! - schema 1, feature 46 (a second review): a `for` element's type read
//!   as a slot's is (not re-read by name in the caller's file when the
//!   crate gives it several types; a `crate::` path is read anywhere); a
//!   crate is the directory above its first `src/`, `tests/`… (`src/tests/`
//!   is the crate's), several types counted per crate so; `crate::m!` takes
//!   the calling file's own macro first (a test's or binary's); an item of
//!   the calling file shadows a glob's variant; a capitalized path head
//!   (`I::Item`) is again no type the index places; tuple-struct fields read
//!   past comments in one scan that skips strings and nests `/* */`
//!   (rust-crates unchanged: right 38,659, elsewhere 387).
//! - schema 1, feature 47: the first parameter of a closure given to an
//!   iterator's or `Option`'s method (`xs.iter().map(|x| …)`, through
//!   `rev`, `filter`, `take` …; `o.map(|x| …)`, `v.retain(|x| …)`) is an
//!   element of what it walks (`=xs[]`, as a `for` loop's; rust-crates:
//!   right 38,659 -> 38,669).
//! - schema 1, feature 48: a name or type a Rust `use` binds is read through
//!   that path (`use serde_json::to_string;` → `to_string()`, `use
//!   syn::punctuated::Punctuated;` → `Punctuated::new`), re-exports followed
//!   across the index's crates; one std binds is none of the index's; a
//!   `use` inside a function or module binds there only, before the file's;
//!   the caller's file's own impl of a type's trait method first
//!   (rust-crates: right 38,669 -> 38,946, elsewhere 387 -> 308, resolved
//!   outside 586 -> 501).
//! - schema 1, feature 49: a Rust `impl` for a reference or pointer type is
//!   named after the type it refers to (`impl Deserializer for &'a mut
//!   Deserializer<R>`: `Deserializer.deserialize_any`, was `'a mut
//!   Deserializer.deserialize_any`; 367 rust-crates symbols), so `self.m()`
//!   inside it finds the type's methods (rust-crates: right 38,946 -> 39,024).
//! - schema 1, feature 50: Rust `super::f` and `self::f` are paths to modules
//!   (they were read as the caller's type); an inline module's function is
//!   found through a path (`parsing::f` of the caller's file's `mod parsing`,
//!   `attr::parsing::parse_inner` of the file `attr` names); of a function and
//!   a struct a `use` names, the function; a type no `use` names is looked
//!   for through the file's globs (`use rayon_core::*;`, `use super::*;`)
//!   (rust-crates: right 39,024 -> 39,156).
//! - schema 1, feature 51: a Rust method call on a receiver of known type
//!   that no impl of the type in the index defines is the method of the one
//!   trait in sight of the caller declaring it (its own, a `use`'s, a glob's:
//!   `w.write_all()` through `use tokio::io::AsyncWriteExt;`), or of that
//!   trait's blanket impl (`impl<I: ?Sized> IntoParallelRefIterator for I`);
//!   never a name std's types define, nor when another impl beside the trait
//!   could answer (rust-crates: right 39,156 -> 39,472, elsewhere 316 -> 318,
//!   resolved outside 502 -> 512).
//! - schema 1, feature 52: in Rust, `cls` and `this` are names like any other
//!   (`cls: &ClassUnicode` types `cls.iter()`; they were taken for the
//!   instance, as Python's `cls`); a `let` bound to `vec![…]` is a `Vec`, to
//!   serde's `tri!(e)` what `e?` is (rust-crates: right 39,472 -> 39,546).
//! - schema 1, feature 53: a review of 48-52. Rust `self::f`/`super::f` from
//!   inside an inline module name that module or the one around it (`mod
//!   tests { super::parse() }`: the file's `parse`); `self::f` at a file's top
//!   is the file's own, `super::f` from `src/b.rs` or `src/b/mod.rs` the crate
//!   root's, and neither falls back to a function of the name elsewhere; an
//!   inner `use std::…` hides the file's `use` of the name; a trait's method
//!   (feature 51) needs an `impl` of the trait for the receiver's type or a
//!   blanket impl, and for a std or other library's type only a blanket
//!   impl's own method (a slice's impl for a `Vec`); `impl<T: Tr> Tr for &T`
//!   keeps its written name (no blanket impl); `through_reexports` visits a
//!   module once per hop count (mutual globs: 12 s -> 1 s on a pathological
//!   tree), and a `use`'s scope is checked only for uses of the called name.
//! - schema 1, feature 54: what a Rust loop or an iterator's closure walks may
//!   be a method's result (`for a in cmd.get_arguments()`, `self.states()`,
//!   `cmd.get_arguments().filter(|x| …)`), typed as the method's signature
//!   declares it: `impl Iterator<Item = &Arg>`, `&[Arg]`, `Iter<'_, T>`
//!   (rust-crates, 53 and 54: right 39,546 -> 39,610, elsewhere 320 -> 319,
//!   resolved outside 512 -> 510).
//! - schema 1, feature 55: a Rust iterator type of the index yields its
//!   `impl Iterator`'s `type Item` (`for s in self.states()`, `->
//!   StateIter<'_, T>`, `type Item = State<'a>;`), the container's own file's
//!   first (rust-crates: right 39,610 -> 39,651, elsewhere 319 -> 320).
//! - schema 1, feature 56: a second review's mends. `Self` in the signature
//!   of a method a loop or closure walks is that method's type (`-> &[Self]`);
//!   `self::`/`super::` from an impl inside an inline module (whose methods
//!   are not named after it) are read from that module, found by lines;
//!   `super::X` that an outer inline module's `use` or glob brings is read as
//!   the caller reads `X`; a blanket impl's type may be any three-letter name
//!   no type bears (`impl<Fut: ?Sized> TryFutureExt for Fut`); a `String`'s
//!   method may be `str`'s impl's; `super::f` from a module `main.rs`
//!   declares is `main.rs`'s; the innermost `use` is the smallest scope's
//!   (rust-crates: right 39,651 -> 39,656, elsewhere 320 -> 322).
//! - schema 1, feature 57: a Rust closure's parameter `j`, when the closure is
//!   argument `i` of a call of a function, a path or `self.m`, is written
//!   `g(#i).#j` (`self.enter(|core, cx| …)` → `self.enter(#0).#1`) and typed
//!   by `g`'s signature (`where F: FnOnce(Box<Core>, &Context)`, `impl
//!   FnMut(&T)`, `Box<dyn Fn(A)>`), read where `g` is written; the callbacks
//!   each Rust function takes are kept as JavaScript's are (rust-crates:
//!   right 39,656 -> 39,735, none worse).
//! - schema 1, feature 58: the callee of feature 57 may be a local's or a
//!   parameter's method (`s.enter(|core| …)`), found as that call is, by the
//!   receiver type it carries; a local of no type is not read (rust-crates:
//!   right 39,735 -> 39,792, none worse).
//! - schema 1, feature 59: a Python call's result is typed by what the
//!   function returns (its annotation, else the one call, `self` or `cls(…)`
//!   every `return` gives): a receiver that is a call (`Foo(a).m()`,
//!   `Foo(a).filter(b).m()`), `self.m()` of a method, and a local bound to a
//!   method's result through a typed local, written `<Engine()>engine.
//!   from_string()` (or `<Paginator()>_.page()` of a call's method) in
//!   `receiver_type` (django: Python calls resolved 75,889 -> 77,063; of the
//!   1,284 whose target changed, Jedi agrees with the new one in 184 of 260
//!   drawn, with the old in none).
//! - schema 1, feature 60: a Python attribute path is read attribute by
//!   attribute, each the type its class assigns: `self.a.b.m()`, and
//!   `f.widget.m()` through a typed local (`receiver_type`
//!   `<forms.TimeField()>f.widget`); a descriptor's class on the way stops
//!   it. Feature 59's review: a method's `self`/`cls()`/`self.m()` result is
//!   the class it was looked up on (a subclass's overrides); no result for
//!   `async def`, `@overload`, `@contextmanager`, a callee the function binds
//!   itself (a parameter, a local class or import), or a multi-line call
//!   followed by more (django: Python calls resolved 77,063 -> 77,144).
//! - schema 1, feature 61: a second review's mends of feature 59: a local
//!   import, `global` and `except … as` no longer hide a function's result;
//!   each return value is read once (8,000 returns in one function: 35.6 s
//!   -> 0.44 s); django's edges are identical to feature 60's.
//! - schema 1, feature 62: `return type(self)(…)` is the receiver's class; an
//!   `async def` gives no result even when it declares one (django's edges
//!   identical to feature 61's).

use std::sync::Arc;

mod binfile;
pub mod diag;
pub mod diff;
pub mod dirs;
pub mod download;
#[cfg(feature = "embed")]
pub mod embed;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
pub mod heads;
pub mod keyword;
pub mod ngram;
pub mod ops;
pub mod signing;
pub mod table;
#[cfg(feature = "embed")]
pub mod vectors;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};

/// Version of the table layout; readers refuse other versions.
pub const SCHEMA_VERSION: u32 = 1;
/// Version of what fills the tables; a bump means "rebuild for better data".
pub const FEATURE_VERSION: u32 = 62;
/// Name of the manifest file inside a snapshot directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Is `s` usable as one path component a manifest names (a file, a repo, a
/// snapshot id)? Letters, digits, `-`, `_` and `.`, never `.` or `..`: a
/// reader joins it to a directory and must stay inside.
pub fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && s != "."
        && s != ".."
}
/// Tool name recorded in manifests.
pub const BUILDER_NAME: &str = "code-indexer";

/// Values of `symbols.kind`.
pub const SYMBOL_KINDS: &[&str] = &[
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "union",
    "type",
    "constant",
    "variable",
    "macro",
    "module",
    "namespace",
    "field",
    "property",
    "constructor",
];
/// Values of `references.ref_kind`.
pub const REF_KINDS: &[&str] = &["call", "type", "import", "field", "identifier"];
/// Values of `edges.kind`.
pub const EDGE_KINDS: &[&str] = &[
    "imports",
    "calls",
    "extends",
    "implements",
    "contains",
    "attribute",
    "mentions",
];

/// One column: name, Arrow type, nullability and the documentation that
/// `SCHEMA.md` must carry for it.
pub struct Column {
    pub name: &'static str,
    pub data_type: DataType,
    pub nullable: bool,
    pub doc: &'static str,
}

/// One table of a snapshot.
pub struct Table {
    pub name: &'static str,
    pub file: &'static str,
    pub doc: &'static str,
    pub columns: Vec<Column>,
}

impl Table {
    /// The Arrow schema used by writer and reader.
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| Field::new(c.name, c.data_type.clone(), c.nullable))
                .collect::<Vec<_>>(),
        ))
    }

    /// Index of a column by name; panics on a name that is not in the table,
    /// which is a programming error caught by tests.
    pub fn col(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("table {} has no column {name}", self.name))
    }
}

fn c(name: &'static str, data_type: DataType, nullable: bool, doc: &'static str) -> Column {
    Column {
        name,
        data_type,
        nullable,
        doc,
    }
}

use DataType::{Boolean, Float32, Int32, Int64, Utf8};

/// `files.parquet`: one row per file the walker kept, with its content.
pub fn files_table() -> Table {
    Table {
        name: "files",
        file: "files.parquet",
        doc: "One row per indexed file (what ripgrep would search, minus default exclusions), sorted by path, with its full text content (secrets redacted).",
        columns: vec![
            c("path", Utf8, false, "Path relative to the repository root, '/'-separated. Primary key."),
            c("language", Utf8, false, "Language id: python, javascript, typescript, tsx, rust, go, java, c, cpp, markdown, or 'text' for any other text file."),
            c("size_bytes", Int64, false, "Size of the file on disk in bytes."),
            c("line_count", Int32, false, "Number of lines (a final line without newline counts)."),
            c("content_sha256", Utf8, false, "Hex sha256 of the content as published: the file's bytes with secrets masked (never a hash of a secret)."),
            c("is_test", Boolean, false, "Matches a test pattern (config `test_patterns` or the defaults)."),
            c("is_generated", Boolean, false, "Minified or bundled output, or a package manager's lock file: grep-able, but left out of chunks and symbols."),
            c("is_lossy", Boolean, false, "The file was not valid UTF-8; content holds a lossy conversion (U+FFFD)."),
            c("module_path", Utf8, true, "Language-style module name of the file's directory (e.g. 'django.db.models', 'std/net/http', 'serde::de')."),
            c("module_root", Utf8, true, "Repo-relative directory of the module the file belongs to (configured, or inferred from __init__.py, package.json, Cargo.toml, go.mod); '' is the root."),
            c("submodule", Utf8, true, "Configured submodule name, else the first directory below module_root."),
            c("has_secrets", Boolean, false, "At least one secret was detected (and redacted) in the file."),
            c("secret_count", Int32, false, "Number of redacted secrets."),
            c("content", Utf8, false, "Full text, secrets replaced by '*' of the same byte length (so byte and line offsets stay true)."),
        ],
    }
}

/// `chunks.parquet`: retrieval units.
pub fn chunks_table() -> Table {
    Table {
        name: "chunks",
        file: "chunks.parquet",
        doc: "Retrieval units: a whole small file, a top-level definition, a method with a context header, a class summary, a Markdown section, or a window of lines. Sorted by path, start_byte, kind.",
        columns: vec![
            c("chunk_id", Int64, false, "Stable id (hash of path, kind and byte span); also the vector id in vectors.faiss."),
            c("path", Utf8, false, "File path (joins files.path)."),
            c("language", Utf8, false, "Language id of the file."),
            c("chunk_type", Utf8, false, "'code' or 'doc'."),
            c("kind", Utf8, false, "file | definition | method | class_summary | block | section | window."),
            c("symbol", Utf8, true, "Qualified name of the definition the chunk covers, if any."),
            c("module_path", Utf8, true, "The file's module_path."),
            c("heading_path", Utf8, true, "Markdown heading path, ' > '-joined, for doc sections."),
            c("start_line", Int32, false, "First line, 1-based."),
            c("end_line", Int32, false, "Last line, 1-based, inclusive."),
            c("start_byte", Int64, false, "Byte offset of the first byte in the file content."),
            c("end_byte", Int64, false, "Byte offset one past the last byte."),
            c("token_count", Int32, false, "Approximate token count of the chunk text (bytes / 4, rounded up)."),
            c("is_test", Boolean, false, "The file is a test."),
            c("retrieval_weight", Float32, false, "Ranking weight: 1.0, tests 0.5, navigation docs the configured boost."),
            c("context_header", Utf8, false, "Short header giving the chunk's place: file, module, class, related names."),
            c("text", Utf8, true, "Synthesized text of class_summary chunks (class signature, doc, method signatures); NULL for every other chunk, whose text is its byte span of files.content (see the SQL example)."),
        ],
    }
}

/// `symbols.parquet`: definitions.
pub fn symbols_table() -> Table {
    Table {
        name: "symbols",
        file: "symbols.parquet",
        doc: "Definitions found by tree-sitter: functions, methods, classes, structs, interfaces, traits, enums, types, constants, macros, modules, fields. Sorted by path, start_byte.",
        columns: vec![
            c("symbol_id", Int64, false, "1-based ordinal of the row: unique within the snapshot (not across snapshots)."),
            c("path", Utf8, false, "File path (joins files.path)."),
            c("name", Utf8, false, "Simple name as written."),
            c("qualified_name", Utf8, false, "Container chain and name joined by '.' within the file (e.g. 'Model.save', 'Server.ServeHTTP')."),
            c("kind", Utf8, false, "function | method | class | struct | interface | trait | enum | union | type | constant | variable | macro | module | namespace | field | property | constructor."),
            c("language", Utf8, false, "Language id."),
            c("container", Utf8, true, "qualified_name of the enclosing symbol, if any (for Go methods: the receiver type)."),
            c("parent_id", Int64, true, "symbol_id of the enclosing symbol, if it is a symbol of the same file."),
            c("signature", Utf8, false, "The definition's header: its text up to the body, whitespace collapsed, at most 300 characters."),
            c("doc", Utf8, true, "First paragraph of its docstring or doc comment, at most 300 characters."),
            c("start_line", Int32, false, "First line of the definition, 1-based (decorators and doc comments excluded)."),
            c("end_line", Int32, false, "Last line, 1-based, inclusive."),
            c("start_byte", Int64, false, "Byte offset of the definition node."),
            c("end_byte", Int64, false, "Byte offset one past its end."),
            c("name_line", Int32, false, "Line of the name token, 1-based (what ctags reports)."),
            c("is_test", Boolean, false, "The file is a test."),
        ],
    }
}

/// `references.parquet`: identifier occurrences.
pub fn references_table() -> Table {
    Table {
        name: "references",
        file: "references.parquet",
        doc: "Identifier occurrences (not definition names) with the symbol that encloses them. Sorted by path, start_byte.",
        columns: vec![
            c("path", Utf8, false, "File path."),
            c("name", Utf8, false, "The identifier as written."),
            c("line", Int32, false, "1-based line."),
            c("column", Int32, false, "1-based byte column (as `rg --column`)."),
            c("start_byte", Int64, false, "Byte offset of the identifier; it ends at start_byte + octet_length(name)."),
            c("ref_kind", Utf8, false, "call | type | import | field | identifier: the syntactic role."),
            c("enclosing_symbol", Utf8, true, "qualified_name of the innermost enclosing definition (join symbols on path and qualified_name); NULL at file level."),
        ],
    }
}

/// `edges.parquet`: relations.
pub fn edges_table() -> Table {
    Table {
        name: "edges",
        file: "edges.parquet",
        doc: "Relations: imports (resolved to files or package directories where possible), calls, extends, implements, contains. Sorted by src_path, kind, line, dst_name.",
        columns: vec![
            c("kind", Utf8, false, "imports | calls | extends | implements | contains | mentions (a navigation doc names a file, module or symbol)."),
            c("src_path", Utf8, false, "File where the relation is written."),
            c("src_symbol", Utf8, true, "qualified_name of the enclosing source symbol (NULL: the file itself)."),
            c("src_symbol_id", Int64, true, "symbol_id of src_symbol."),
            c("dst_name", Utf8, false, "Target as written: module specifier, callee name (Go: with what it selects from, `net.Listen`, `srv.Serve`; `(…).Close` when that spans lines or is long), base type name, or contained symbol's qualified name."),
            c("dst_path", Utf8, true, "Resolved target file (for Go imports: the package directory); NULL when unresolved or external."),
            c("dst_symbol_id", Int64, true, "symbol_id of the resolved target symbol (join symbols for its qualified_name, kind, signature)."),
            c("line", Int32, false, "1-based line of the relation in src_path."),
            c("resolved", Boolean, false, "The target was found inside the repository: dst_path for imports, dst_symbol_id for calls, extends, implements and contains (for an attribute: its type's class)."),
            c("receiver_type", Utf8, true, "A call `x.m(…)` through a local variable or parameter (Python, Rust, Go): the type its binding names, as written (`&mut Context<'_>`, `Optional[Form]`), or the call it is the result of (`Foo::new()`, `Foo::open()?`, `Form()`); a Rust call through a field of `self`: the field's declared type; a Python `attribute` edge: the attribute's type; NULL otherwise."),
            c("alias", Utf8, true, "An import that binds another name than its own: that name (`np` of `import numpy as np`, `_` of `from django.utils.translation import gettext as _`, `c` of `use a::b as c`, Go's `f` of `import f \"fmt\"`, `ns` of `import * as ns from \"./x\"`; `*` for Python's `from m import *`); calls and bases written through it resolve through the import. NULL otherwise (feature 16)."),
        ],
    }
}

/// `patterns.parquet`: families of files written to the same shape.
pub fn patterns_table() -> Table {
    Table {
        name: "patterns",
        file: "patterns.parquet",
        doc: "Detected patterns (at least 5 files whose structural features, from their syntax trees, have Jaccard similarity >= 0.8 with a canonical file), one row per member file. Sorted by canonical_path, name, path.",
        columns: vec![
            c("pattern_id", Int64, false, "Stable id of the pattern; also the id of its pattern chunk in vectors.faiss."),
            c("name", Utf8, false, "Generated name, e.g. 'AppConfig subclasses in django/contrib/*/apps.py'."),
            c("module_path", Utf8, true, "module_path of the canonical file."),
            c("canonical_path", Utf8, false, "The member most similar to the others: read it first."),
            c("member_count", Int32, false, "Number of member files."),
            c("similarity", Float32, false, "Mean similarity of the members to the canonical file."),
            c("path", Utf8, false, "This member file (joins files.path)."),
            c("member_similarity", Float32, false, "This member's similarity to the canonical file (1 for the canonical file)."),
            c("text", Utf8, true, "Text of the pattern chunk (name, canonical file, members, shared structure); on the canonical file's row only."),
        ],
    }
}

/// All tables in a snapshot, in manifest order.
pub fn all_tables() -> Vec<Table> {
    vec![
        files_table(),
        chunks_table(),
        symbols_table(),
        references_table(),
        edges_table(),
        patterns_table(),
    ]
}

/// One data file listed in the manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ManifestFile {
    /// File name inside the snapshot directory.
    pub name: String,
    /// Row count for tables; 0 for non-table files.
    pub rows: u64,
    pub bytes: u64,
    pub sha256: String,
}

/// Git facts of the indexed tree; absent when it is not a git work tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct GitInfo {
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// Committer time of HEAD, ISO-8601 with offset (a fact of the repo, not of the build).
    pub commit_time: Option<String>,
    /// True when tracked files had uncommitted changes at build time.
    pub dirty: bool,
}

/// Counts of what the walker left out, by reason.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct SkipCounts {
    pub default_excluded: u64,
    pub config_excluded: u64,
    pub too_large: u64,
    pub binary: u64,
    pub unreadable: u64,
}

/// Embedding facts; `None` in snapshots built without vectors.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EmbeddingInfo {
    /// Canonical model id (`minilm-int8:all-MiniLM-L6-v2`, `minilm:all-MiniLM-L6-v2` (fp32), `voyage:<m>`, `openai:<m>`, `ollama:<m>`).
    pub model: String,
    pub dimension: u32,
    /// `inner_product` (over normalized vectors: cosine).
    pub metric: String,
    pub normalized: bool,
    /// FAISS layout: `Flat`, or `IVF<nlist>,Flat` above the size threshold.
    #[serde(default)]
    pub index: String,
    /// Number of vectors: one per chunk and pattern chunk, plus one per
    /// definition window of long chunks (FAISS ids = chunk ids, repeated).
    #[serde(default)]
    pub count: u64,
    /// What was embedded per chunk.
    #[serde(default)]
    pub input: String,
    /// sha256 of the local model's weights file that made the vectors
    /// (absent for remote models and in snapshots built before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
}

/// `manifest.json`: written last; its presence marks a complete snapshot.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema_version: u32,
    pub feature_version: u32,
    pub tool: String,
    pub tool_version: String,
    pub repo: String,
    pub git: GitInfo,
    pub config_hash: String,
    /// sha256 over the sorted (path, content_sha256) list and the config hash:
    /// identifies the input; equal inputs give equal snapshots.
    pub input_hash: String,
    /// First 16 hex digits of the sha256 of this manifest (compact JSON, id empty).
    pub snapshot_id: String,
    pub files: Vec<ManifestFile>,
    pub skipped: SkipCounts,
    pub embeddings: Option<EmbeddingInfo>,
    /// Set only in an overlay (`code-indexer invalidate-file`): the snapshot it
    /// amends and the paths it stands in for. Absent from every full snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay: Option<OverlayInfo>,
}

impl Manifest {
    /// The rows of the listed data file `name` (0 when it is not listed).
    pub fn rows(&self, name: &str) -> u64 {
        self.files
            .iter()
            .find(|f| f.name == name)
            .map_or(0, |f| f.rows)
    }
}

/// What an overlay amends: its tables hold the current analysis of the
/// `replaces` paths that exist in the working tree; a path in `replaces`
/// without a row in its `files.parquet` was deleted (or is no longer indexed).
/// Readers hide every `replaces` path of the base snapshot and read the
/// overlay's rows instead.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OverlayInfo {
    /// Snapshot id of the base snapshot.
    pub base: String,
    /// Repo-relative paths, sorted, without duplicates.
    pub replaces: Vec<String>,
}

/// Directory, inside a repo's snapshot directory (`<out>/<repo>/`), that holds
/// the overlays: `OVERLAY_DIR/<base-id>/<overlay-id>/` (a snapshot directory
/// whose manifest has `overlay`) and `OVERLAY_DIR/<base-id>/current` (the id
/// of the one in force).
pub const OVERLAY_DIR: &str = ".overlays";

/// The overlay in force for the snapshot in `snapshot_dir` (`<repo>/<id>/`):
/// the directory `<repo>/OVERLAY_DIR/<id>/current` names, when it holds a manifest.
pub fn overlay_in_force(snapshot_dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let id = snapshot_dir.file_name()?;
    let parent = snapshot_dir.parent()?.join(OVERLAY_DIR).join(id);
    let cur = std::fs::read_to_string(parent.join("current")).ok()?;
    let d = parent.join(cur.trim());
    d.join(MANIFEST_FILE).is_file().then_some(d)
}

/// Keys written into every Parquet file's key-value metadata (same values as
/// the manifest; the snapshot id, file hashes and input hash are excluded
/// because they are derived from these very bytes or the whole tree).
pub const KV_KEYS: &[&str] = &[
    "code_index.schema_version",
    "code_index.feature_version",
    "code_index.tool",
    "code_index.tool_version",
    "code_index.repo",
    "code_index.commit",
    "code_index.branch",
    "code_index.commit_time",
    "code_index.config_hash",
    "code_index.table",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_unique_and_documented() {
        for t in all_tables() {
            let mut names: Vec<_> = t.columns.iter().map(|c| c.name).collect();
            names.sort();
            let n = names.len();
            names.dedup();
            assert_eq!(n, names.len(), "duplicate column in {}", t.name);
            for c in &t.columns {
                assert!(!c.doc.is_empty(), "{}.{} undocumented", t.name, c.name);
            }
        }
    }

    /// SCHEMA.md must list every column of every table with its type, and
    /// nothing that the code does not have.
    #[test]
    fn schema_md_in_step_with_code() {
        let md = include_str!("../SCHEMA.md");
        for t in all_tables() {
            let header = format!("### `{}`", t.file);
            let start = md
                .find(&header)
                .unwrap_or_else(|| panic!("SCHEMA.md lacks section {header}"));
            let rest = &md[start + header.len()..];
            let end = rest.find("\n### ").unwrap_or(rest.len());
            let section = &rest[..end];
            let mut documented = Vec::new();
            for line in section.lines() {
                if let Some(row) = line.strip_prefix("| `") {
                    let name = row.split('`').next().unwrap();
                    documented.push(name.to_string());
                }
            }
            let code: Vec<String> = t.columns.iter().map(|c| c.name.to_string()).collect();
            assert_eq!(
                documented, code,
                "SCHEMA.md columns of {} differ from code",
                t.name
            );
            for col in &t.columns {
                let ty = sql_type(&col.data_type);
                let row = section
                    .lines()
                    .find(|l| l.starts_with(&format!("| `{}` ", col.name)))
                    .unwrap();
                assert!(
                    row.contains(ty),
                    "SCHEMA.md type of {}.{} should be {ty}",
                    t.name,
                    col.name
                );
            }
        }
        assert!(md.contains(&format!("Schema version: **{SCHEMA_VERSION}**")));
        assert!(md.contains(&format!("feature version: **{FEATURE_VERSION}**")));
    }

    /// DuckDB type name of an Arrow type, as SCHEMA.md shows it.
    pub fn sql_type(t: &DataType) -> &'static str {
        match t {
            DataType::Utf8 => "VARCHAR",
            DataType::Int32 => "INTEGER",
            DataType::Int64 => "BIGINT",
            DataType::Float32 => "FLOAT",
            DataType::Boolean => "BOOLEAN",
            _ => "?",
        }
    }
}
