//! The task that keeps one registry and its rows in agreement: it pushes
//! the registry's own changes and applies the other replicas'.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::store::Store;
use crate::registry::{Changes, Registry, ToolState};

/// The first wait before trying the database again, doubled up to
/// [`LONGEST_WAIT`] while it stays down.
const FIRST_WAIT: Duration = Duration::from_millis(250);
const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// What the listener tells the worker.
#[derive(Debug)]
enum Heard {
    /// Listening (again): notifications may have been missed before.
    Connected,
    /// Another replica wrote the registry, at this version.
    Written(i64),
}

/// One registry's side of the agreement.
///
/// Per tool it keeps two states: `rows`, what the table holds as last read
/// or written here, and `agreed`, what the registry and the table last
/// agreed on. A registry state that differs from `agreed` is a change made
/// here, to write; a row that differs is another replica's, to apply. When
/// both moved, the change made here is written: it is the later write.
pub(super) struct Worker {
    registry: Registry,
    store: Store,
    rows: HashMap<String, ToolState>,
    agreed: HashMap<String, ToolState>,
    /// The highest version read.
    read: i64,
}

impl Worker {
    pub(super) fn new(registry: Registry, store: Store) -> Self {
        Worker {
            registry,
            store,
            rows: HashMap::new(),
            agreed: HashMap::new(),
            read: 0,
        }
    }

    /// Reads every row and brings registry and table into agreement.
    pub(super) async fn reload(&mut self) -> Result<(), sqlx::Error> {
        self.read_since(0).await?;
        self.reconcile().await
    }

    /// Reads the rows written since `since`; rows this replica wrote are
    /// already known, in full (a row's JSON keeps times to the millisecond).
    async fn read_since(&mut self, since: i64) -> Result<(), sqlx::Error> {
        for row in self.store.rows_since(since).await? {
            self.read = self.read.max(row.version);
            if row.replica == self.store.replica {
                continue;
            }
            match row.state {
                Ok(state) => {
                    self.rows.insert(row.key, state);
                }
                Err(problem) => tracing::warn!(
                    registry = %self.store.registry,
                    key = %row.key,
                    %problem,
                    "a shared tool state that this build cannot read; ignored"
                ),
            }
        }
        Ok(())
    }

    /// Writes the changes made here, then applies the other replicas',
    /// unless the registry changed meanwhile (then again from the start).
    async fn reconcile(&mut self) -> Result<(), sqlx::Error> {
        loop {
            let state = self.registry.state();
            self.agreed.retain(|key, _| state.tools.contains_key(key));
            for (key, local) in &state.tools {
                if !self.agreed.contains_key(key) {
                    // A tool served here for the first time: the table's
                    // state wins, and without a row its own is a change.
                    let agreed = match self.rows.contains_key(key) {
                        true => local.clone(),
                        false => blank(),
                    };
                    self.agreed.insert(key.clone(), agreed);
                }
            }
            let changed: Vec<(String, ToolState)> = state
                .tools
                .iter()
                .filter(|(key, local)| self.agreed.get(*key) != Some(local))
                .map(|(key, local)| (key.clone(), local.clone()))
                .collect();
            if !changed.is_empty() {
                self.store.write(&changed).await?;
                for (key, local) in changed {
                    self.rows.insert(key.clone(), local.clone());
                    self.agreed.insert(key, local);
                }
            }
            let remote: BTreeMap<String, ToolState> = state
                .tools
                .iter()
                .filter_map(|(key, local)| {
                    let row = self.rows.get(key).filter(|row| *row != local)?;
                    Some((key.clone(), row.clone()))
                })
                .collect();
            if remote.is_empty() {
                return Ok(());
            }
            match self.registry.apply_synced(&remote, state.generation) {
                None => continue,
                Some(Ok(_)) => self.agreed.extend(remote),
                Some(Err(error)) => {
                    tracing::warn!(
                        registry = %self.store.registry,
                        %error,
                        "shared tool states could not be applied; ignored"
                    );
                    for key in remote.keys() {
                        self.rows.remove(key);
                    }
                }
            }
            return Ok(());
        }
    }

    /// Follows the registry and the listener until `stop` fires (or its
    /// sender is dropped) or the registry is gone; then writes what
    /// changed here, if the database lets it.
    pub(super) async fn run(
        mut self,
        mut changes: Changes,
        listener: PgListener,
        mut stop: oneshot::Receiver<()>,
    ) {
        let (heard, mut hearing) = mpsc::channel(64);
        let _listening = AbortOnDrop(tokio::spawn(listen(self.store.clone(), listener, heard)));
        // Set while the database is failing: when to try again.
        let mut retry: Option<Duration> = None;
        loop {
            let wait = async {
                match retry {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => std::future::pending().await,
                }
            };
            let outcome = tokio::select! {
                biased;
                _ = &mut stop => break,
                change = changes.next() => {
                    if change.is_none() {
                        return;
                    }
                    changes.skip_waiting();
                    self.reconcile().await
                }
                heard = hearing.recv() => match heard {
                    None => return,
                    Some(Heard::Connected) => self.reload().await,
                    Some(Heard::Written(version)) if version > self.read => {
                        match self.read_since(self.read).await {
                            Ok(()) => self.reconcile().await,
                            Err(error) => Err(error),
                        }
                    }
                    Some(Heard::Written(_)) => continue,
                },
                () = wait => self.reload().await,
            };
            retry = match outcome {
                Ok(()) => None,
                Err(error) => {
                    let wait = retry.map_or(FIRST_WAIT, |wait| (wait * 2).min(LONGEST_WAIT));
                    tracing::warn!(
                        registry = %self.store.registry,
                        %error,
                        "the shared registry state is unreachable; trying again in {wait:?}"
                    );
                    Some(wait)
                }
            };
        }
        if let Err(error) = self.reconcile().await {
            tracing::warn!(
                registry = %self.store.registry,
                %error,
                "stopping with changes made here not shared"
            );
        }
    }
}

/// A tool's state when nothing was done to it.
fn blank() -> ToolState {
    ToolState {
        disabled: None,
        overridden: None,
    }
}

/// Hears the channel, and connects again whenever the connection is lost,
/// telling the worker each time; ends when the worker is gone or the pool
/// is closed.
async fn listen(store: Store, first: PgListener, heard: mpsc::Sender<Heard>) {
    let mut listener = Some(first);
    let mut wait = FIRST_WAIT;
    loop {
        let mut current = match listener.take() {
            Some(current) => current,
            None => match store.listen().await {
                Ok(current) => {
                    wait = FIRST_WAIT;
                    if heard.send(Heard::Connected).await.is_err() {
                        return;
                    }
                    current
                }
                Err(_) if store.is_closed() => return,
                Err(error) => {
                    tracing::warn!(
                        registry = %store.registry,
                        %error,
                        "cannot listen for shared registry changes; trying again in {wait:?}"
                    );
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(LONGEST_WAIT);
                    continue;
                }
            },
        };
        loop {
            match current.try_recv().await {
                Ok(Some(notification)) => {
                    let Some(version) = store.notice(notification.payload()) else {
                        continue;
                    };
                    if heard.send(Heard::Written(version)).await.is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(
                        registry = %store.registry,
                        %error,
                        "lost the shared registry's notifications; listening again"
                    );
                    break;
                }
            }
        }
    }
}

/// A task that ends with its owner.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
