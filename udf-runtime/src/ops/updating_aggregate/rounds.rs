//! A batch cut into rounds (see `aggregation.rs`): round `n` holds the `n`-th row of every
//! group the batch touches, in the rows' order. The buffers stay from batch to batch.

#[derive(Default)]
pub(super) struct Rounds {
    /// Per group: rows of the batch so far (zero between batches), and the position of its
    /// last one.
    seen: Vec<u32>,
    last_position: Vec<u32>,
    /// The round of each row.
    round_of: Vec<u32>,
    /// Where each round starts, and the end.
    pub(super) starts: Vec<usize>,
    /// The row at each position; empty when there is one round (positions are rows).
    pub(super) order: Vec<u32>,
    /// The position of each row; empty as above.
    position: Vec<u32>,
    /// For a position after the first round: the position of its group's row before.
    previous: Vec<u32>,
}

impl Rounds {
    /// Cuts the rows whose groups (of `total_groups`) are `groups`.
    pub(super) fn cut(&mut self, groups: &[usize], total_groups: usize) {
        self.seen.resize(total_groups, 0);
        self.last_position.resize(total_groups, 0);
        self.number(groups);
        for &group in groups {
            self.seen[group] = 0;
        }
    }

    /// Numbers each row's round and places the rows in round order (`seen` is zero for
    /// every group before; it counts the batch's rows of each group after).
    fn number(&mut self, groups: &[usize]) {
        let (seen, last_position) = (&mut self.seen, &mut self.last_position);
        let rows = groups.len();
        // One pass numbers each row's round and counts the rounds' rows (`starts` holds
        // counts at `round + 1` until the prefix sum below).
        self.round_of.clear();
        self.starts.clear();
        self.starts.push(0);
        for &group in groups {
            let round = seen[group];
            seen[group] = round + 1;
            self.round_of.push(round);
            let slot = round as usize + 1;
            if slot == self.starts.len() {
                self.starts.push(0);
            }
            self.starts[slot] += 1;
        }
        let rounds = self.starts.len() - 1;
        for round in 0..rounds {
            self.starts[round + 1] += self.starts[round];
        }
        self.order.clear();
        self.position.clear();
        self.previous.clear();
        if rounds == 1 {
            return;
        }
        self.order.resize(rows, 0);
        self.position.resize(rows, 0);
        self.previous.resize(rows, 0);
        // A second pass places each row after the earlier rows of its round. The rows of a
        // group come in round order, so the position of a group's row in the round before
        // is already known (`last_position`).
        let mut next = self.starts[..rounds].to_vec();
        for (row, (&round, &group)) in self.round_of.iter().zip(groups).enumerate() {
            let at = next[round as usize];
            next[round as usize] += 1;
            self.order[at] = row as u32;
            self.position[row] = at as u32;
            if round > 0 {
                self.previous[at] = last_position[group];
            }
            last_position[group] = at as u32;
        }
    }

    /// Whether there is more than one round (the positions are not the rows).
    pub(super) fn many(&self) -> bool {
        self.starts.len() > 2
    }

    /// The position of the batch's row `row`.
    pub(super) fn position_of(&self, row: usize) -> usize {
        if self.position.is_empty() {
            row
        } else {
            self.position[row] as usize
        }
    }

    /// Where the first round ends.
    pub(super) fn first_end(&self) -> usize {
        self.starts[1]
    }

    /// Where the group's result before the row at `position` is among the results: before
    /// the batch (`0..first_end`, in the first round's order) for a first-round row, after
    /// its group's row in the round before (`first_end + position`) otherwise.
    pub(super) fn before(&self, position: usize) -> usize {
        let first = self.first_end();
        if position < first {
            position
        } else {
            first + self.previous[position] as usize
        }
    }
}
