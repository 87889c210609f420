//! Sessions whose queries run on a Ballista cluster: planned here (the same SQL, functions and
//! DataFrame API as a local session), executed by the cluster's scheduler and executors.

use ballista::prelude::SessionContextExt;
use ballista_core::extension::{SessionConfigExt, SessionStateExt};
use datafusion::common::{Result, plan_err};
use datafusion::prelude::{SessionConfig, SessionContext};

use std::sync::Arc;

use datafusion::execution::SessionStateBuilder;

use super::Codecs;
use super::reach::ReachingPlanner;
use super::scheduler::static_planning;
use crate::Session;

/// The port a scheduler listens on unless told otherwise.
const DEFAULT_SCHEDULER_PORT: u16 = 50050;

impl Session {
    /// A session whose queries run on the Ballista scheduler at `url` (`df://host:port`).
    ///
    /// Register the same functions on it as the scheduler and executors were built with:
    /// calls are planned here and resolved there by name, and a function that differs
    /// between the two sides fails the query by name. Nothing is contacted until a query
    /// runs, so an unreachable scheduler is that query's error.
    pub fn remote(url: &str) -> Result<Session> {
        Session::remote_with_config(url, SessionConfig::new())
    }

    /// [`Session::remote`] with DataFusion settings of your choice.
    pub fn remote_with_config(url: &str, config: SessionConfig) -> Result<Session> {
        let scheduler = scheduler_address(url)?;
        let session = Session::with_config(static_planning(config));
        let codecs = Codecs::of(&session);
        session.with_state(|state| {
            let state = codecs
                .install(state)
                .upgrade_for_ballista(scheduler.clone())?;
            let planner = ReachingPlanner {
                inner: state.query_planner().clone(),
                scheduler,
            };
            Ok(SessionStateBuilder::new_from_existing(state)
                .with_query_planner(Arc::new(planner))
                .build())
        })
    }

    /// A session with its own Ballista scheduler and executor in this process (Ballista's
    /// standalone mode), carrying the functions `register` registers. They share this
    /// session's state, so a plan that only works in-process can pass here: test against
    /// separate processes too.
    pub async fn standalone(register: impl FnOnce(&Session) -> Result<()>) -> Result<Session> {
        Session::standalone_with_config(SessionConfig::new(), register).await
    }

    /// [`Session::standalone`] with DataFusion settings of your choice.
    pub async fn standalone_with_config(
        config: SessionConfig,
        register: impl FnOnce(&Session) -> Result<()>,
    ) -> Result<Session> {
        // Planned as a cluster's scheduler plans (the in-process scheduler plans with this
        // session's state).
        let session = Session::with_config(static_planning(config.upgrade_for_ballista()));
        register(&session)?;
        let codecs = Codecs::of(&session);
        let state = codecs.install(session.context().state());
        let context = SessionContext::standalone_with_state(state).await?;
        session.with_state(|_| Ok(context.state()))
    }
}

/// `df://host:port` as the `http://host:port` the scheduler's gRPC service is at.
fn scheduler_address(url: &str) -> Result<String> {
    let Some(rest) = url.strip_prefix("df://") else {
        return plan_err!("`{url}` is not a scheduler address: write `df://host:port`");
    };
    let (host, port) = match rest.trim_end_matches('/').rsplit_once(':') {
        Some((host, port)) => match port.parse::<u16>() {
            Ok(port) => (host, port),
            Err(_) => return plan_err!("`{url}`: `{port}` is not a port number"),
        },
        None => (rest.trim_end_matches('/'), DEFAULT_SCHEDULER_PORT),
    };
    if host.is_empty() {
        return plan_err!("`{url}` names no host: write `df://host:port`");
    }
    Ok(format!("http://{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::scheduler_address;

    #[test]
    fn scheduler_urls_name_a_host_and_perhaps_a_port() {
        assert_eq!(
            scheduler_address("df://localhost:50060").unwrap(),
            "http://localhost:50060"
        );
        assert_eq!(
            scheduler_address("df://cluster").unwrap(),
            "http://cluster:50050"
        );
        for (url, says) in [
            ("http://localhost:50050", "is not a scheduler address"),
            ("df://localhost:port", "`port` is not a port number"),
            ("df://:50050", "names no host"),
        ] {
            let error = scheduler_address(url).unwrap_err().to_string();
            assert!(error.contains(says), "{url}: {error}");
        }
    }
}
