//! `shop approve ID --as MANAGER` and `shop reject ID --as MANAGER`: a
//! manager's decision on a request waiting for one.

use toolwright::BoxError;
use toolwright::approval::{Approval, ApprovalId};

use super::open;
use crate::table::sorted;

/// What a manager decides.
pub(super) enum Decision {
    /// The requester's identical call then runs once.
    Approve,
    /// The identical call is refused until the request expires.
    Reject,
}

/// `actor` decides request `id`, for `reason`.
pub(super) async fn run(
    database: &str,
    id: ApprovalId,
    actor: &str,
    reason: &str,
    decision: Decision,
) -> Result<(), BoxError> {
    let shop = open(database).await?;
    let caller = shop.caller(actor).await?;
    match decision {
        Decision::Approve => {
            let approval = shop.approve(id, &caller, reason).await?;
            let requester = &approval.requested_by;
            let request = describe(&approval);
            println!("approved {request}; {requester}'s identical call will now run once");
        }
        Decision::Reject => {
            let request = describe(&shop.reject(id, &caller, reason).await?);
            println!("rejected {request}; the identical call is refused until the request expires");
        }
    }
    Ok(())
}

/// A request as a person reads it: `request 3 (orders.place {..}, asked by alice)`.
fn describe(approval: &Approval) -> String {
    format!(
        "request {} ({} {}, asked by {})",
        approval.id,
        approval.request.key,
        sorted(&approval.request.arguments),
        approval.requested_by
    )
}
