//! Firing timers: those due at a watermark, in chunks (a chunk of due timers on disk comes
//! back to memory for its call), each call described by its key in errors.

use super::*;

impl Driver {
    /// Starts firing the timers due at the current watermark, if it moved since they last
    /// fired.
    pub(super) fn start_firing(&mut self, now: i64) {
        if let Some(watermark) = self.watermark() {
            self.start_firing_at(watermark, now);
        }
    }

    /// Fires the timers due at `watermark` before going on.
    pub(super) fn fire_at(&mut self, watermark: i64, now: i64) -> Result<()> {
        self.start_firing_at(watermark, now);
        while self.fire_chunk()? {}
        Ok(())
    }

    /// Starts firing the timers due at `watermark`, if it is past the one they last fired at
    /// (a firing under way goes first: it is of an earlier watermark).
    pub(super) fn start_firing_at(&mut self, watermark: i64, now: i64) {
        debug_assert!(self.firing.is_none(), "a firing is under way");
        let timers = self.state.timers_mut();
        if !self.call.spec.on_timer || timers.fired_at().is_some_and(|fired| fired >= watermark) {
            return;
        }
        timers.due(watermark);
        let limit = timers.batch_limit();
        self.firing = Some(FiringUnderWay {
            watermark,
            now,
            limit,
        });
    }

    /// One chunk of the firing under way; whether there is more of it. With the disk
    /// backend, the keys of due timers on disk come back a chunk at a time, each chunk fired
    /// (in order with those in memory) and moved out again before the next, so that firing
    /// millions of timers stays within the budget. Each chunk fires at least one timer of the
    /// batch, which is finite (timers registered meanwhile wait for the next advance).
    pub(super) fn fire_chunk(&mut self) -> Result<bool> {
        let Some(FiringUnderWay {
            watermark,
            now,
            limit,
        }) = self.firing
        else {
            return Ok(false);
        };
        let bound = self
            .state
            .bring_back_due_timers(watermark, limit, TIMERS_BROUGHT_BACK)?;
        let timers = self.state.timers_mut();
        timers.set_batch_bound(bound);
        if !timers.batch_pending() {
            self.firing = None;
            return Ok(false);
        }
        self.fire_call(watermark, now)?;
        Ok(true)
    }

    /// One `on_timer` call for the timers of the batch due at `watermark` (within its bound).
    pub(super) fn fire_call(&mut self, watermark: i64, now: i64) -> Result<()> {
        let mut fired = std::mem::take(&mut self.fired);
        fired.clear();
        let mut released = std::mem::take(&mut self.released);
        let mut output = CallOutput::default();
        let (stores, timers) = self.state.call_parts();
        let mut call = TimerCall {
            watermark,
            now,
            state: stores,
            timers,
            emission: Emission {
                sink: &mut output,
                chunk: self.batch_size,
                timer_base: 0,
                fired: &mut fired,
                released: &mut released,
                row: 0,
                in_timer: true,
            },
        };
        let processor = self.instance.processor();
        let outcome = udf_core::catch_user_panic(|| processor.on_timer(&mut call));
        let position = call.emission.position();
        let result = match failure(outcome, " in on_timer") {
            Some(message) => Err(self.timer_failed(&message, &fired, position)),
            None => self.emit(output, 0, &[], &[], &fired),
        };
        self.fired = fired;
        self.state.set_now(now);
        let settled = self.finish_call(released);
        result?;
        settled
    }

    pub(super) fn timer_failed(
        &self,
        message: &str,
        fired: &[FiredTimer],
        position: Position,
    ) -> DataFusionError {
        let timer = match position {
            Position::Timer(index) => fired.get(index),
            Position::Row(_) => None,
        };
        let (name, time) = timer.map_or(("(unknown)", 0), |t| {
            (t.name.as_deref().unwrap_or("(unnamed)"), t.time)
        });
        let key = timer.map(|t| self.describe_key(t.key)).unwrap_or_default();
        DataFusionError::Execution(format!(
            "process table function `{}` {message} (timer {name} at {time} ms{key})",
            self.call.name
        ))
    }

    /// `, key k => a` for key slot `slot` (nothing without PARTITION BY).
    pub(super) fn describe_key(&self, slot: u32) -> String {
        let Ok(columns) = self.state.key_arrays(&[slot]) else {
            return String::new();
        };
        // Named as the first table's PARTITION BY names them.
        let names = self.call.tables.first().map_or(&[][..], |t| &t.keys[..]);
        let parts: Vec<String> = columns
            .iter()
            .zip(names)
            .filter_map(|(column, expr)| {
                let value = display_value(column.as_ref(), 0)?;
                let name = match expr {
                    datafusion::logical_expr::Expr::Column(c) => c.name.clone(),
                    other => other.to_string(),
                };
                Some(format!("{name} => {value}"))
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(", key {}", parts.join(", "))
        }
    }

    /// The output's prefix from a call's key columns: with several tables, each table's
    /// PARTITION BY columns — the same key, in each table's types (Flink's output).
    pub(super) fn key_prefix(&self, keys: Vec<ArrayRef>) -> Result<Vec<ArrayRef>> {
        if self.tables.len() <= 1 {
            return Ok(keys);
        }
        let mut prefix = Vec::with_capacity(self.prefix_types.len());
        for ty in self.prefix_types.iter() {
            let key = &keys[prefix.len() % keys.len().max(1)];
            prefix.push(if key.data_type() == ty {
                key.clone()
            } else {
                cast(key, ty)?
            });
        }
        Ok(prefix)
    }

    /// The keys and times of fired timers, for the rows they emitted.
    pub(super) fn timer_columns(
        &self,
        fired: &[FiredTimer],
    ) -> Result<(Vec<ArrayRef>, Vec<ArrayRef>)> {
        if fired.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let slots: Vec<u32> = fired.iter().map(|t| t.key).collect();
        let keys = self.key_prefix(self.state.key_arrays(&slots)?)?;
        let times = match &self.time_type {
            Some(time_type) => {
                let tz = match time_type {
                    ArrowType::Timestamp(_, tz) => tz.clone(),
                    _ => None,
                };
                let times =
                    TimestampMillisecondArray::from_iter_values(fired.iter().map(|t| t.time))
                        .with_timezone_opt(tz);
                vec![cast(&times, time_type)?]
            }
            None => Vec::new(),
        };
        Ok((keys, times))
    }
}
