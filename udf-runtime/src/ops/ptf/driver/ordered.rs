//! Tables with ORDER BY: rows wait in their sort buffer until the table's watermark passes
//! them, then go to `eval` under the watermarks of their release.

use super::*;

impl Driver {
    /// A batch of table argument `table`, which has ORDER BY: each row waits in the sort
    /// buffer unless it is late (its time at or before the table's watermark: dropped and
    /// counted); whenever the table's watermark moves, the rows it passed go to `eval` — under
    /// the watermarks before the move, as Flink's sort does — and then timers fire. With
    /// several tables each is sorted by its own watermark (as Flink sorts each input); with
    /// one, that is the processor's.
    ///
    /// A row that is not late has a time after every watermark before it, so no earlier
    /// advance could pass it: the batch's rows wait together, and the rows of all its advances
    /// are released together, each under its own advance.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn receive_ordered(
        &mut self,
        table: usize,
        source: usize,
        batch: &RecordBatch,
        times: Option<Vec<i64>>,
        before: Option<Vec<Option<i64>>>,
        after: Option<i64>,
        now: i64,
    ) -> Result<()> {
        let (Some(times), Some(before)) = (times, before) else {
            return exec_err!("ORDER BY without event time reached `{}`", self.call.name);
        };
        let mut advances: Vec<TableAdvance> = Vec::new();
        let mut waiting: Vec<u32> = Vec::with_capacity(batch.num_rows());
        let mut own = self.table_watermark(table);
        for (row, before) in before.iter().enumerate() {
            if let Some(before) = before {
                own = self.note_advance(table, &mut advances, |w| w.advance(source, *before));
            }
            if own.is_some_and(|w| times[row] <= w) {
                self.metrics.late_rows_dropped.add(1);
                continue;
            }
            waiting.push(row as u32);
        }
        if let Some(sorter) = self.state.sorter_mut(table) {
            sorter.insert(batch, &waiting, &times)?;
        }
        if let Some(after) = after {
            self.note_advance(table, &mut advances, |w| w.advance(source, after));
        }
        self.state.set_now(now);
        self.release_ordered(table, &advances, now)
    }

    /// Applies `change` to the watermarks, noting the advance of `table`'s watermark (with
    /// the processor's before and after) if it moved; the table's watermark after it.
    pub(super) fn note_advance(
        &mut self,
        table: usize,
        advances: &mut Vec<TableAdvance>,
        change: impl FnOnce(&mut SourceWatermarks),
    ) -> Option<i64> {
        let watermarks = |driver: &Self| {
            let own = driver.table_watermark(table);
            // One table's watermark is the processor's.
            let current = if driver.tables.len() == 1 {
                own
            } else {
                driver.watermark()
            };
            (own, current)
        };
        let (own, current) = watermarks(self);
        change(self.state.watermarks_mut());
        let (after, current_after) = watermarks(self);
        if let Some(own_after) = after
            && after != own
        {
            advances.push(TableAdvance {
                own,
                own_after,
                current,
                current_after,
            });
        }
        after
    }

    /// Hands table `table`'s rows that `advances` passed to `eval`, each under the
    /// watermarks before the advance that passed it, and fires the timers each advance made
    /// due (at the processor's watermark after it) after its rows.
    pub(super) fn release_ordered(
        &mut self,
        table: usize,
        advances: &[TableAdvance],
        now: i64,
    ) -> Result<()> {
        if advances.is_empty() {
            return Ok(());
        }
        let thresholds: Vec<i64> = advances.iter().map(|a| a.own_after).collect();
        // The advances whose timers have fired, or fire inside the call.
        let mut fired_through = 0;
        let released = match self.state.sorter_mut(table) {
            Some(sorter) => sorter.release(&thresholds)?,
            None => None,
        };
        if let Some(released) = released {
            // One call for all the rows: a row under the watermarks before the advance that
            // passed it; where advances without rows lie between two rows' advances, the
            // timers fire at each of them there (after the rows of the advance before, as if
            // each advance were on its own).
            let under: Vec<Option<i64>> = released
                .advances
                .iter()
                .map(|&a| advances[a].current)
                .collect();
            let mut firings: Vec<Firing> = Vec::new();
            for (row, &advance) in released.advances.iter().enumerate() {
                if advance > fired_through {
                    // Rows of `advance` are under its previous watermark, which fires
                    // before them.
                    firings.extend(advances[fired_through..advance - 1].iter().filter_map(|h| {
                        h.current_after.map(|watermark| Firing { row, watermark })
                    }));
                    fired_through = advance;
                }
            }
            let trace = trace_of(&under, None);
            // With several tables, the rows' own table's watermark before each advance.
            let own: Vec<Option<i64>>;
            let at_start: Vec<Option<i64>>;
            let table_watermarks = if self.tables.len() > 1 {
                own = released.advances.iter().map(|&a| advances[a].own).collect();
                at_start = (0..self.tables.len())
                    .map(|t| self.table_watermark(t))
                    .collect();
                TableWatermarks {
                    at_start: &at_start,
                    own: Some(trace_of(&own, None)),
                }
            } else {
                TableWatermarks::single()
            };
            self.push(
                table,
                &released.batch,
                Some(&released.times),
                trace.with_firings(&firings),
                table_watermarks,
                now,
            )?;
        }
        // The advances after the last rows (or all, without rows) fire after the call.
        for advance in &advances[fired_through..] {
            if let Some(watermark) = advance.current_after {
                self.fire_at(watermark, now)?;
            }
        }
        Ok(())
    }
}
