//! A representative catalog for hostile input, and what every answer to it
//! must keep. Shared by the property tests (`tests/tests/hostile_input.rs`,
//! every `cargo test`) and the fuzz target (`fuzz/fuzz_targets/invoke.rs`,
//! which includes this file), so both hold the executor to the same rules.
//!
//! The catalog covers each way a call can go: bodies that never wait and
//! one that does, the validator-free path, constraints and patterns,
//! nested structs, an internally tagged enum, maps, sets and tuples,
//! externally tagged and untagged enums, `char`, arrays, `u128` and
//! `NonZeroU32`, a type that refuses values its schema accepts, an
//! `async` `authorize` hook, a `write` behind a plain-`fn` `approve` hook,
//! and a REQUEST-scoped dependency. The rules, for every call:
//!
//! - a body runs only on arguments a standard validator accepts against the
//!   advertised schema, and only after its hooks said yes on them;
//! - arguments the schema accepts are never refused as invalid, except by
//!   a type's own rule, reported at its field;
//! - no hook is asked and no dependency built for invalid arguments;
//! - every dependency built is finalized before the call returns;
//! - what an approver sees is what runs: the digest covers the canonical
//!   arguments, which read back as the arguments the body gets;
//! - nothing else comes back: no panic, no other error.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolwright::{
    CallError, Catalog, Container, Executor, Inject, Invocation,
    approval::Digest,
    executor::Verdict,
    scope::{ResolveError, Scope},
    tool,
};

/// What the catalog's bodies, hooks and provider do; each is counted, and
/// the counts compared before and after each call.
#[derive(Clone, Copy)]
enum Event {
    Body,
    AuthorizeAsked,
    Authorized,
    ApproveAsked,
    Approved,
    Built,
    Finalized,
}
use Event::*;

static EVENTS: [AtomicUsize; 7] = [const { AtomicUsize::new(0) }; 7];
/// What a hook found wrong with the call it was asked about.
static BROKEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn happened(event: Event) {
    EVENTS[event as usize].fetch_add(1, Ordering::SeqCst);
}

fn counts() -> [usize; 7] {
    std::array::from_fn(|event| EVENTS[event].load(Ordering::SeqCst))
}

fn ran() {
    happened(Body);
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Square { side: u32 },
    Point,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Address {
    #[schemars(length(min = 1, max = 12))]
    street: String,
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
    floor: Option<i8>,
}

/// Nested types, an internally tagged enum, options.
#[tool(key = "hostile.nested", effect = read, authorize = public)]
async fn nested(address: Address, shapes: Vec<Shape>, size: Option<Size>) -> usize {
    ran();
    let _ = (address, size);
    shapes.len()
}

/// Constraints, a pattern and a default.
#[tool(key = "hostile.constrained", effect = read, authorize = public)]
async fn constrained(
    #[schemars(range(min = -5, max = 5))] small: i8,
    #[schemars(regex(pattern = r"^[a-z]+$"))] word: String,
    #[default = 7] seven: u64,
    #[schemars(length(min = 1, max = 3))] list: Vec<u16>,
    counts: BTreeMap<String, u32>,
) -> u64 {
    ran();
    let _ = (small, word, list, counts);
    seven
}

/// Maps, sets and tuples.
#[tool(key = "hostile.collections", effect = read, authorize = public)]
async fn collections(
    counts: BTreeMap<String, u16>,
    tags: HashSet<String>,
    pair: (u8, String),
) -> usize {
    ran();
    counts.len() + tags.len() + usize::from(pair.0)
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Point {
    x: i32,
    y: i32,
}

/// A nested struct and nothing else: its schema states only types.
#[tool(key = "hostile.point", effect = read, authorize = public)]
async fn plot(point: Point) -> i64 {
    ran();
    i64::from(point.x) + i64::from(point.y)
}

/// Only types: the executor may skip the validator. The body waits.
#[tool(key = "hostile.plain", effect = read, authorize = public)]
async fn plain(a: i64, b: bool, c: Option<String>, d: Vec<u8>) -> i64 {
    tokio::task::yield_now().await;
    ran();
    let _ = (b, c, d);
    a
}

/// No arguments at all.
#[tool(key = "hostile.none", effect = read, authorize = public)]
async fn nothing() -> bool {
    ran();
    true
}

/// Letters only: a rule of the type that its schema (a string) does not state.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(try_from = "String")]
struct Code(String);

impl TryFrom<String> for Code {
    type Error = &'static str;

    fn try_from(code: String) -> Result<Self, Self::Error> {
        if !code.is_empty() && code.bytes().all(|b| b.is_ascii_alphabetic()) {
            Ok(Code(code))
        } else {
            Err("a code is letters only")
        }
    }
}

/// A parameter whose type refuses values the schema accepts.
#[tool(key = "hostile.coded", effect = read, authorize = public)]
async fn coded(code: Code, count: u8) -> usize {
    ran();
    code.0.len() + usize::from(count)
}

/// Lets in even levels only.
async fn even_levels(_: &(), call: &Invocation<'_, GuardedArgs>) -> bool {
    happened(AuthorizeAsked);
    let allowed = call.args().level % 2 == 0;
    if allowed {
        happened(Authorized);
    }
    allowed
}

/// Behind an `async` `authorize` hook.
#[tool(key = "hostile.guarded", effect = read, authorize = even_levels)]
async fn guarded(level: u8, note: Option<String>) -> u8 {
    ran();
    let _ = note;
    level
}

/// Approves a third of calls, asks a person about a third and refuses the
/// rest, by the digest; first checks that what it approves is what runs.
fn by_digest(_: &(), call: &Invocation<'_, ApprovedArgs>) -> Verdict {
    happened(ApproveAsked);
    let canonical = call.canonical_arguments();
    if call.digest() != Digest::of(call.key(), canonical) {
        BROKEN
            .lock()
            .unwrap()
            .push(format!("the digest is not that of {canonical}"));
    }
    let args = call.args();
    let same = serde_json::from_value::<ApprovedArgs>(canonical.clone()).map(|back| {
        back.ratio.to_bits() == args.ratio.to_bits()
            && back.weight.map(f64::to_bits) == args.weight.map(f64::to_bits)
            && back.labels == args.labels
            && back.retries == args.retries
            && back.size == args.size
    });
    if !matches!(same, Ok(true)) {
        BROKEN.lock().unwrap().push(format!(
            "the canonical arguments {canonical} do not read back as {args:?}: {same:?}"
        ));
    }
    match call.digest().as_bytes()[0] % 3 {
        0 => {
            happened(Approved);
            Verdict::Allow
        }
        1 => Verdict::Pending,
        _ => Verdict::Deny,
    }
}

/// A write behind a plain-`fn` `approve` hook, with floats and a map in
/// what it approves.
#[tool(key = "hostile.approved", effect = write, authorize = public, approve = by_digest)]
async fn approved(
    ratio: f32,
    weight: Option<f64>,
    labels: BTreeMap<String, i16>,
    #[default = 3] retries: u8,
    size: Size,
) -> f32 {
    ran();
    let _ = (weight, labels, retries, size);
    ratio
}

/// A REQUEST-scoped dependency: its provider counts builds, its
/// finalizer closes.
struct Tally;

/// Injects a REQUEST-scoped dependency.
#[tool(key = "hostile.tallied", effect = read, authorize = public)]
async fn tallied(n: u16, tally: Inject<Tally>) -> u16 {
    ran();
    let _ = tally;
    n
}

fn container() -> Container {
    Container::builder()
        .request::<Tally>(|scope: Scope| async move {
            happened(Built);
            scope.on_close(|_| async {
                happened(Finalized);
            });
            Ok::<_, ResolveError>(Tally)
        })
        .build()
}

/// An executor over the hostile catalog, and a standard validator for
/// each tool's advertised schema.
pub(crate) struct Fixture {
    runtime: tokio::runtime::Runtime,
    executor: Executor,
    validators: Vec<(String, jsonschema::Validator)>,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let catalog = Catalog::discover_in([module_path!()]).unwrap();
        let validators = catalog
            .iter()
            .map(|t| {
                (
                    t.name().to_owned(),
                    jsonschema::validator_for(t.input_schema()).unwrap(),
                )
            })
            .collect();
        Fixture {
            runtime: tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap(),
            executor: Executor::new(catalog, container()).unwrap(),
            validators,
        }
    }

    /// The tools' names.
    #[allow(dead_code)] // by the property tests, not the fuzz target
    pub(crate) fn tools(&self) -> impl Iterator<Item = &str> + '_ {
        self.validators.iter().map(|(name, _)| name.as_str())
    }

    /// Sends `arguments` to every tool; the first rule an answer breaks.
    pub(crate) fn send_everywhere(&self, arguments: &Value) -> Result<(), String> {
        self.validators
            .iter()
            .try_for_each(|(name, validator)| self.check(name, validator, arguments).map(drop))
    }

    /// Sends `arguments` to tool `name`: its answer, or the rule it broke.
    #[allow(dead_code)] // by the property tests, not the fuzz target
    pub(crate) fn send(&self, name: &str, arguments: &Value) -> Result<Answer, String> {
        let (name, validator) = self
            .validators
            .iter()
            .find(|(tool, _)| *tool == name)
            .ok_or_else(|| format!("no tool {name}"))?;
        self.check(name, validator, arguments)
    }

    fn check(
        &self,
        name: &str,
        validator: &jsonschema::Validator,
        arguments: &Value,
    ) -> Result<Answer, String> {
        let before = counts();
        let result = self
            .runtime
            .block_on(self.executor.invoke(name, arguments.clone(), &()));
        let after = counts();
        let did = |event: Event| after[event as usize] - before[event as usize];
        let valid = validator.is_valid(arguments);
        let fail = |rule: &str| format!("{name}: {rule}, for {arguments} -> {result:?}");
        if let Some(broken) = BROKEN.lock().unwrap().pop() {
            return Err(fail(&broken));
        }
        if did(Built) != did(Finalized) {
            return Err(fail("a dependency was built and not finalized"));
        }
        let guarded = name == "guarded";
        let approved = name == "approved";
        let bodies = did(Body);
        let broken = match &result {
            Ok(_) if !valid => Some("a body ran on arguments the schema rejects"),
            Ok(_) if bodies != 1 => Some("answered without running its body once"),
            Ok(_) if guarded && did(Authorized) != 1 => Some("ran without authorization"),
            Ok(_) if approved && did(Approved) != 1 => Some("ran without approval"),
            Ok(_) => None,
            Err(CallError::InvalidArguments { violations, .. }) => {
                let asked = did(AuthorizeAsked) + did(ApproveAsked);
                if bodies + asked + did(Built) != 0 {
                    Some("invalid arguments reached a hook, a provider or the body")
                } else if !valid && violations.0.is_empty() {
                    Some("refused with no violation")
                } else if valid && (name != "coded" || violations.0[0].path != "/code") {
                    Some("arguments the schema accepts were refused")
                } else {
                    None
                }
            }
            Err(CallError::Denied { .. }) if guarded && valid => {
                let refused = did(AuthorizeAsked) == 1 && did(Authorized) == 0;
                (!refused).then_some("denied without its hook refusing")
            }
            Err(CallError::NotApproved { .. } | CallError::ApprovalRequired(_))
                if approved && valid && (did(ApproveAsked) != 1 || did(Approved) != 0) =>
            {
                Some("not approved without its hook holding back")
            }
            Err(CallError::NotApproved { .. }) if approved && valid => None,
            Err(CallError::ApprovalRequired(request)) if approved && valid => (request.digest
                != Digest::of(&request.key, &request.arguments))
            .then_some("the approval request's digest is not that of its arguments"),
            Err(_) => Some("an answer no rule allows"),
        };
        let broken = broken.or((result.is_err() && bodies != 0).then_some("a body ran and failed"));
        match broken {
            Some(rule) => Err(fail(rule)),
            None => Ok(result),
        }
    }
}

/// What a tool answered.
pub(crate) type Answer = Result<Value, CallError>;

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
enum Action {
    Stop,
    Move(u8),
    Turn { degrees: i16 },
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(untagged)]
enum Either {
    Number(u32),
    Text(String),
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Settings {
    #[serde(default)]
    verbose: bool,
    #[serde(rename = "maxDepth")]
    max_depth: Option<usize>,
}

/// Types serde reads in more than one way, or whose JSON is narrower
/// than their Rust range.
#[tool(key = "hostile.varied", effect = read, authorize = public)]
async fn varied(
    letter: char,
    action: Action,
    either: Either,
    triple: [u8; 3],
    big: u128,
    settings: Settings,
    nonzero: std::num::NonZeroU32,
) -> usize {
    ran();
    let _ = (letter, action, either, triple, big, settings, nonzero);
    1
}
