//! The processing-time clock of a session, as a config extension the executors read.

use std::sync::Arc;

use datafusion::prelude::SessionConfig;
use udf_core::ptf::{ProcessingClock, SystemClock};

/// The clock state TTL is measured on.
#[derive(Debug, Clone)]
pub struct SessionClock(pub Arc<dyn ProcessingClock>);

impl SessionClock {
    /// The session's clock (the system clock unless one was set).
    pub fn of(config: &SessionConfig) -> Arc<dyn ProcessingClock> {
        config
            .get_extension::<SessionClock>()
            .map_or_else(|| Arc::new(SystemClock) as _, |c| c.0.clone())
    }
}
