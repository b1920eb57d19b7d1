//! Words people use for what tools name otherwise: "remove" for delete,
//! "folder" for directory. A search counts a query word's synonyms too,
//! at [`SYNONYM_WEIGHT`](super::SYNONYM_WEIGHT): the tool's own word still
//! ranks first.
//!
//! The groups are the common vocabulary of applications and their APIs
//! (records and their verbs, files, messages, people, money, time,
//! infrastructure), not any one catalog's words. A word may sit in several
//! groups; it then has the synonyms of each. An application adds its own
//! words to a tool with `search_hint`.

/// Groups of words that mean the same in a request to a tool.
pub(super) const GROUPS: &[&[&str]] = &[
    // Records and what is done to them.
    &[
        "create",
        "add",
        "new",
        "make",
        "insert",
        "register",
        "provision",
        "spin",
    ],
    &[
        "delete", "remove", "erase", "drop", "destroy", "purge", "discard", "trash",
    ],
    &[
        "update", "edit", "modify", "change", "alter", "patch", "amend",
    ],
    &[
        "get", "fetch", "retrieve", "read", "show", "view", "display", "see", "print", "open",
        "load",
    ],
    &["list", "enumerate", "browse", "every", "index"],
    &[
        "search", "find", "lookup", "query", "filter", "locate", "seek",
    ],
    &["copy", "duplicate", "clone"],
    &["move", "rename", "relocate", "transfer"],
    &["cancel", "abort", "stop", "halt", "terminate", "kill"],
    &["start", "begin", "launch", "run", "trigger", "kick"],
    &["restore", "undo", "revert", "rollback", "recover"],
    &["save", "store", "write", "persist", "record", "keep"],
    &["upload", "attach", "import"],
    &["download", "export", "save"],
    &["approve", "accept", "confirm", "sign"],
    &["reject", "decline", "deny", "refuse"],
    &["assign", "grant", "give", "make"],
    &["revoke", "withdraw", "logout", "signout"],
    &["login", "signin", "logon", "authenticate"],
    &["subscribe", "join", "signup", "enroll", "optin"],
    &["unsubscribe", "optout", "leave"],
    &["compare", "versus", "vs", "difference", "diff", "change"],
    &[
        "summarize",
        "summary",
        "tldr",
        "digest",
        "brief",
        "recap",
        "catch",
    ],
    &["translate", "translation", "language"],
    &["compress", "zip", "gzip", "archive", "pack"],
    &["extract", "unzip", "unpack", "decompress"],
    &["echo", "repeat", "parrot"],
    &["sum", "add", "total", "plus", "addition"],
    &["count", "number", "how", "many", "tally"],
    &["check", "verify", "validate", "test", "inspect"],
    &["status", "state", "health", "progress"],
    &["history", "log", "past", "previous", "earlier", "last"],
    &["track", "trace", "where", "whereabouts"],
    &["schedule", "plan", "book", "calendar"],
    &["reschedule", "postpone", "push", "delay", "defer", "move"],
    &["remind", "reminder", "nudge", "chase", "follow"],
    &["notify", "alert", "page", "wake", "ping"],
    &[
        "send", "post", "deliver", "dispatch", "email", "mail", "message", "dm",
    ],
    &["reply", "respond", "answer"],
    &["forward", "pass"],
    &["share", "invite", "collaborate"],
    &["tag", "label", "categorize"],
    &[
        "sort", "order", "rank", "biggest", "largest", "smallest", "top",
    ],
    &["size", "big", "large", "small", "space", "bytes", "weight"],
    &["upgrade", "downgrade", "switch", "plan", "tier"],
    &["checkout", "switch"],
    &["commit", "checkin", "snapshot"],
    &["stage", "add"],
    &["merge", "combine", "join"],
    &["branch", "fork"],
    &["deploy", "release", "ship", "rollout", "publish"],
    &["publish", "post", "release", "announce"],
    &["scale", "resize", "grow", "shrink"],
    &["backup", "snapshot", "copy"],
    // Things.
    &["directory", "folder", "dir"],
    &["file", "document", "doc"],
    &["content", "contents", "text", "inside", "body"],
    &["image", "picture", "photo", "pic", "screenshot", "logo"],
    &["video", "movie", "clip", "recording"],
    &["message", "chat", "note", "dm", "text"],
    &["mail", "email", "inbox", "letter"],
    &["channel", "room", "group"],
    &[
        "user", "account", "member", "person", "people", "profile", "whoever",
    ],
    &["customer", "client", "buyer", "shopper"],
    &["contact", "person", "lead", "prospect"],
    &[
        "employee",
        "staff",
        "worker",
        "colleague",
        "coworker",
        "teammate",
    ],
    &["manager", "boss", "supervisor", "lead", "report"],
    &["team", "department", "group", "org"],
    &["admin", "administrator", "owner", "superuser"],
    &["role", "permission", "privilege", "access", "right"],
    &["password", "credential", "secret", "key", "token"],
    &["session", "device", "login"],
    &["ticket", "issue", "case", "bug", "incident", "problem"],
    &["task", "todo", "chore", "item", "action"],
    &["project", "workspace", "repository", "repo"],
    &["event", "meeting", "appointment", "call"],
    &["calendar", "agenda", "schedule", "diary"],
    &["holiday", "vacation", "leave", "pto", "absence", "timeoff"],
    &["invoice", "bill", "receipt"],
    &[
        "payment", "pay", "paid", "charge", "owe", "owed", "unpaid", "overdue", "due",
    ],
    &["refund", "reimburse", "chargeback", "return"],
    &["price", "cost", "rate", "fee", "quote"],
    &["revenue", "sale", "sales", "income", "earnings", "turnover"],
    &["expense", "spend", "spending", "cost", "outgoing"],
    &["profit", "loss", "pnl", "margin"],
    &["subscription", "plan", "membership", "tier"],
    &["order", "purchase", "basket", "cart"],
    &["abandon", "left", "forgotten", "unfinished"],
    &["product", "item", "sku", "article", "goods"],
    &["stock", "inventory", "supply", "quantity"],
    &["shipment", "parcel", "package", "delivery", "consignment"],
    &["vehicle", "truck", "car", "van", "lorry", "fleet"],
    &[
        "location",
        "position",
        "coordinates",
        "latitude",
        "longitude",
        "where",
    ],
    &["address", "place", "street"],
    &[
        "weather",
        "forecast",
        "rain",
        "temperature",
        "sunny",
        "snow",
        "wind",
    ],
    &["instance", "vm", "server", "machine", "host", "node"],
    &["database", "db", "sql"],
    &["record", "dns", "domain", "hostname"],
    &["certificate", "cert", "ssl", "tls"],
    &["job", "cron", "task", "batch"],
    &["deployment", "release", "rollout", "version"],
    &["alert", "alarm", "incident", "outage", "down"],
    &["oncall", "duty", "pager"],
    &["metric", "kpi", "stat", "statistic", "number", "measure"],
    &["report", "dashboard", "statement"],
    &["article", "post", "page", "story"],
    &["link", "url", "address"],
    &["environment", "env", "variable", "config", "setting"],
    &["configuration", "config", "setting", "preference", "option"],
    &["log", "logging", "trace", "debug"],
    &["random", "fake", "simulated", "sample", "dummy"],
    &["form", "questionnaire", "survey", "fill"],
    &["commit", "change", "revision"],
];

#[cfg(test)]
mod tests {
    use super::GROUPS;

    #[test]
    fn groups_are_lowercase_single_words() {
        for group in GROUPS {
            assert!(group.len() >= 2, "{group:?}");
            for word in *group {
                assert!(
                    word.chars().all(|c| c.is_ascii_lowercase()),
                    "{word:?} in {group:?}"
                );
            }
        }
    }
}
