//! The permission policy: ordered rules, first match wins, in addition to
//! every tool's own hooks.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::Selector;
use crate::catalog::{Catalog, ToolEntry};
use crate::decision::Decision;
use crate::effect::Effect;
use crate::pipeline::{ArgumentRules, Gate, Ruling};

/// An ordered list of rules, first match wins, and a fallback for calls no
/// rule matches ([`Decision::Allow`] unless set).
///
/// The policy comes in addition to each tool's own hooks, never instead of
/// them: a call it allows still meets the tool's `authorize` (and, for a
/// write, `approve`) hook; a call it denies never reaches them. It is asked
/// after the arguments are validated, so a rule on arguments sees exactly
/// what the body would receive (canonical: defaults applied). Its decision
/// and rule are recorded in the call's span (`policy`, `policy_rule`).
///
/// Set it on a [`Registry`](crate::registry::Registry); rules that look only at a
/// tool's metadata are decided once per tool when the policy is set, so a
/// call pays for them almost nothing.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation, registry::{Policy, Rule, Selector}};
///
/// /// Send a payment.
/// #[tool(key = "payments.send", effect = write, authorize = public, approve = finance_approves)]
/// async fn send_payment(cents: u64) -> bool { true }
///
/// /// Show the balance.
/// #[tool(key = "payments.balance", effect = read, authorize = public)]
/// async fn balance() -> u64 { 1_000 }
///
/// async fn finance_approves(_: &(), _: &Invocation<'_, SendPaymentArgs>) -> bool { true }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder()
///     .register::<SendPaymentArgs>()
///     .register::<BalanceArgs>()
///     .build()
///     .unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// executor.registry().set_policy(
///     Policy::new()
///         .rule(
///             Rule::deny("big payments", Selector::name("send_payment"), "over the limit")
///                 .when_arguments(|args| args["cents"].as_u64() > Some(100_000)),
///         )
///         .rule(Rule::ask("balances are private", Selector::name("balance"))),
/// );
///
/// let small = executor.invoke("send_payment", json!({"cents": 500}), &()).await;
/// assert_eq!(small.unwrap(), true);
/// let big = executor.invoke("send_payment", json!({"cents": 500_000}), &()).await.unwrap_err();
/// assert!(matches!(big, CallError::PolicyDenied { ref rule, .. } if rule.as_deref() == Some("big payments")));
/// // A read tool the policy asks about waits for a person.
/// let balance = executor.invoke("balance", json!({}), &()).await.unwrap_err();
/// assert!(matches!(balance, CallError::ApprovalRequired(_)));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Policy {
    rules: Vec<Rule>,
    fallback: Decision,
}

/// One rule of a [`Policy`]: a name (recorded in the span and the error),
/// the tools it applies to, optionally a test of the validated arguments,
/// and its decision.
///
/// ```
/// use toolwright::{registry::{Decision, Rule, Selector}};
///
/// let rule = Rule::deny("no deletes on fridays", Selector::tag("delete"), "change freeze");
/// assert_eq!(rule.name(), "no deletes on fridays");
/// assert_eq!(rule.decision(), &Decision::Deny { reason: "change freeze".into() });
/// ```
#[derive(Clone)]
pub struct Rule {
    name: String,
    selector: Selector,
    arguments: Option<ArgumentTest>,
    decision: Decision,
}

/// A rule's test of a call's validated arguments.
type ArgumentTest = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

impl Policy {
    /// A policy with no rules that allows every call (add rules with
    /// [`rule`](Self::rule), change the fallback with
    /// [`fallback`](Self::fallback)).
    ///
    /// ```
    /// use toolwright::{registry::{Decision, Policy}};
    /// assert_eq!(Policy::new().fallback_decision(), &Decision::Allow);
    /// ```
    pub fn new() -> Self {
        Policy {
            rules: Vec::new(),
            fallback: Decision::Allow,
        }
    }

    /// Adds `rule` after the rules already there.
    ///
    /// ```
    /// use toolwright::{registry::{Policy, Rule}};
    /// let policy = Policy::new().rule(Rule::allow_read_only()).rule(Rule::ask_destructive());
    /// assert_eq!(policy.rules().len(), 2);
    /// ```
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The decision for calls no rule matches.
    ///
    /// ```
    /// use toolwright::{registry::{Decision, Policy, Rule}};
    /// // Only what a rule allows runs.
    /// let strict = Policy::new()
    ///     .rule(Rule::allow_read_only())
    ///     .fallback(Decision::Deny { reason: "not allowed by any rule".into() });
    /// assert!(matches!(strict.fallback_decision(), Decision::Deny { .. }));
    /// ```
    pub fn fallback(mut self, decision: Decision) -> Self {
        self.fallback = decision;
        self
    }

    /// The rules, in the order they are tried.
    ///
    /// ```
    /// use toolwright::{registry::{Policy, Rule}};
    /// let policy = Policy::new().rule(Rule::ask_open_world());
    /// assert_eq!(policy.rules()[0].name(), "ask open world");
    /// ```
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The decision for calls no rule matches.
    ///
    /// ```
    /// use toolwright::{registry::{Decision, Policy}};
    /// assert_eq!(Policy::new().fallback(Decision::Ask).fallback_decision(), &Decision::Ask);
    /// ```
    pub fn fallback_decision(&self) -> &Decision {
        &self.fallback
    }

    /// What the policy decides for a call of `tool` with these (validated)
    /// `arguments`, and the name of the rule that decided (`None`: the
    /// fallback). For a UI or a test; the executor asks it itself.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, registry::{Decision, Policy, Rule}};
    ///
    /// /// Delete a file.
    /// #[tool(key = "files.delete", effect = destructive, authorize = public, approve = nobody)]
    /// async fn delete_file(path: String) -> bool { true }
    ///
    /// async fn nobody(_: &(), _: &toolwright::Invocation<'_, DeleteFileArgs>) -> bool { false }
    ///
    /// let catalog = Catalog::builder().register::<DeleteFileArgs>().build().unwrap();
    /// let policy = Policy::new().rule(Rule::allow_read_only()).rule(Rule::ask_destructive());
    /// let (decision, rule) = policy.decide(catalog.get("delete_file").unwrap(), &json!({"path": "/"}));
    /// assert_eq!((decision, rule), (&Decision::Ask, Some("ask destructive")));
    /// ```
    pub fn decide(&self, tool: &ToolEntry, arguments: &Value) -> (&Decision, Option<&str>) {
        self.rules
            .iter()
            .find(|rule| rule.selector.matches(tool) && rule.accepts(arguments))
            .map_or((&self.fallback, None), |rule| {
                (&rule.decision, Some(rule.name.as_str()))
            })
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new()
    }
}

impl Rule {
    /// Allows calls of the tools `selector` picks.
    ///
    /// ```
    /// use toolwright::{registry::{Decision, Rule, Selector}};
    /// assert_eq!(Rule::allow("reads", Selector::namespace("reports")).decision(), &Decision::Allow);
    /// ```
    pub fn allow(name: impl Into<String>, selector: Selector) -> Self {
        Rule::new(name, selector, Decision::Allow)
    }

    /// Refuses calls of the tools `selector` picks, for `reason`.
    ///
    /// ```
    /// use toolwright::{registry::{Rule, Selector}};
    /// let rule = Rule::deny("frozen", Selector::namespace("payments"), "quarter-end freeze");
    /// # let _ = rule;
    /// ```
    pub fn deny(name: impl Into<String>, selector: Selector, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Rule::new(name, selector, Decision::Deny { reason })
    }

    /// Sends calls of the tools `selector` picks down the approval path.
    ///
    /// ```
    /// use toolwright::{registry::{Decision, Rule, Selector}};
    /// assert_eq!(Rule::ask("exports", Selector::tag("pii")).decision(), &Decision::Ask);
    /// ```
    pub fn ask(name: impl Into<String>, selector: Selector) -> Self {
        Rule::new(name, selector, Decision::Ask)
    }

    /// Built-in: allow every `read` tool (`"allow read only"`).
    ///
    /// ```
    /// use toolwright::registry::Rule;
    /// assert_eq!(Rule::allow_read_only().name(), "allow read only");
    /// ```
    pub fn allow_read_only() -> Self {
        Rule::allow("allow read only", Selector::effect(Effect::Read))
    }

    /// Built-in: ask about every `destructive` tool (`"ask destructive"`).
    ///
    /// ```
    /// use toolwright::registry::Rule;
    /// assert_eq!(Rule::ask_destructive().name(), "ask destructive");
    /// ```
    pub fn ask_destructive() -> Self {
        Rule::ask("ask destructive", Selector::effect(Effect::Destructive))
    }

    /// Built-in: refuse every tool tagged `tag`, such as `privileged`
    /// (`"deny tag privileged"`).
    ///
    /// ```
    /// use toolwright::registry::Rule;
    /// assert_eq!(Rule::deny_tag("privileged").name(), "deny tag privileged");
    /// ```
    pub fn deny_tag(tag: &str) -> Self {
        Rule::deny(
            format!("deny tag {tag}"),
            Selector::tag(tag),
            format!("tools tagged `{tag}` are not allowed"),
        )
    }

    /// Built-in: ask about every tool that declares `open_world`
    /// (`"ask open world"`).
    ///
    /// ```
    /// use toolwright::registry::Rule;
    /// assert_eq!(Rule::ask_open_world().name(), "ask open world");
    /// ```
    pub fn ask_open_world() -> Self {
        Rule::ask("ask open world", Selector::OpenWorld)
    }

    /// Applies the rule only to calls whose validated (canonical) arguments
    /// `test` accepts; other calls go on to the next rule.
    ///
    /// ```
    /// use toolwright::{registry::{Rule, Selector}};
    /// let big = Rule::ask("big refunds", Selector::name("refund"))
    ///     .when_arguments(|args| args["cents"].as_u64().is_some_and(|c| c > 10_000));
    /// # let _ = big;
    /// ```
    pub fn when_arguments(mut self, test: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Self {
        self.arguments = Some(Arc::new(test));
        self
    }

    /// The rule's name.
    ///
    /// ```
    /// use toolwright::registry::Rule;
    /// assert_eq!(Rule::ask_destructive().name(), "ask destructive");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools it applies to.
    ///
    /// ```
    /// use toolwright::{Effect, registry::{Rule, Selector}};
    /// assert_eq!(Rule::allow_read_only().selector(), &Selector::effect(Effect::Read));
    /// ```
    pub fn selector(&self) -> &Selector {
        &self.selector
    }

    /// What it decides.
    ///
    /// ```
    /// use toolwright::{registry::{Decision, Rule}};
    /// assert_eq!(Rule::ask_destructive().decision(), &Decision::Ask);
    /// ```
    pub fn decision(&self) -> &Decision {
        &self.decision
    }

    fn new(name: impl Into<String>, selector: Selector, decision: Decision) -> Self {
        Rule {
            name: name.into(),
            selector,
            arguments: None,
            decision,
        }
    }

    fn accepts(&self, arguments: &Value) -> bool {
        self.arguments.as_ref().is_none_or(|test| test(arguments))
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule")
            .field("name", &self.name)
            .field("selector", &self.selector)
            .field("on_arguments", &self.arguments.is_some())
            .field("decision", &self.decision)
            .finish()
    }
}

/// How the policy meets one tool's calls, worked out when the policy or the
/// tools change.
pub(crate) enum ToolRuling {
    /// No policy.
    Open,
    /// Decided from the tool's metadata: by this rule, or the fallback.
    Fixed(Option<usize>),
    /// A rule on arguments comes first: decided per call.
    OnArguments(OnArguments),
}

/// The rules that pick a tool, in order, up to the first that needs no
/// arguments (after which none can match).
pub(crate) struct OnArguments {
    policy: Arc<Policy>,
    rules: Box<[usize]>,
}

impl ToolRuling {
    /// The ruling of every tool of `catalog` under `policy`, in catalog order.
    pub(crate) fn all(policy: Option<&Arc<Policy>>, catalog: &Catalog) -> Box<[ToolRuling]> {
        catalog
            .iter()
            .map(|tool| match policy {
                None => ToolRuling::Open,
                Some(policy) => ToolRuling::of(policy, tool),
            })
            .collect()
    }

    fn of(policy: &Arc<Policy>, tool: &ToolEntry) -> Self {
        let mut rules = Vec::new();
        for (index, rule) in policy.rules.iter().enumerate() {
            if !rule.selector.matches(tool) {
                continue;
            }
            if rule.arguments.is_none() && rules.is_empty() {
                return ToolRuling::Fixed(Some(index));
            }
            rules.push(index);
            if rule.arguments.is_none() {
                break;
            }
        }
        if rules.is_empty() {
            return ToolRuling::Fixed(None);
        }
        ToolRuling::OnArguments(OnArguments {
            policy: policy.clone(),
            rules: rules.into(),
        })
    }

    /// How a call meets the policy, given the policy this ruling was made under.
    pub(crate) fn gate<'a>(&'a self, policy: Option<&'a Policy>) -> Gate<'a> {
        match (self, policy) {
            (ToolRuling::Fixed(rule), Some(policy)) => Gate::Ruled(match rule {
                Some(index) => ruling(&policy.rules[*index]),
                None => Ruling {
                    decision: &policy.fallback,
                    rule: None,
                },
            }),
            (ToolRuling::OnArguments(rules), _) => Gate::OnArguments(rules),
            _ => Gate::Open,
        }
    }
}

impl ArgumentRules for OnArguments {
    fn rule(&self, arguments: &Value) -> Ruling<'_> {
        self.rules
            .iter()
            .map(|&index| &self.policy.rules[index])
            .find(|rule| rule.accepts(arguments))
            .map_or(
                Ruling {
                    decision: &self.policy.fallback,
                    rule: None,
                },
                ruling,
            )
    }
}

fn ruling(rule: &Rule) -> Ruling<'_> {
    Ruling {
        decision: &rule.decision,
        rule: Some(&rule.name),
    }
}
