//! `BeverageNameLookupFunction` from "Asynchronous Scalar Functions": a slow lookup of a
//! beverage's name, which many rows can wait for at once.

use std::time::Duration;

use udf_core::prelude::*;

/// Looks a beverage up in a simulated database that answers after `latency` (the guide's
/// example sleeps one second).
#[derive(Clone, Debug)]
pub struct BeverageNameLookupFunction {
    pub latency: Duration,
}

impl Default for BeverageNameLookupFunction {
    fn default() -> Self {
        BeverageNameLookupFunction {
            latency: Duration::from_secs(1),
        }
    }
}

#[async_scalar_function(name = "GetBeverageName")]
impl BeverageNameLookupFunction {
    /// The name of beverage `beverage_id`; an unknown id is an error.
    async fn eval(&self, beverage_id: i32) -> Result<String> {
        tokio::time::sleep(self.latency).await;
        match beverage_id {
            0 => Ok("Latte".to_owned()),
            1 => Ok("Cappuccino".to_owned()),
            2 => Ok("Espresso".to_owned()),
            other => bail!("Bad beverageId: {other}"),
        }
    }
}
