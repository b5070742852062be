//! Summaries of repeated measurements.

use std::time::Duration;

/// Durations measured one at a time.
#[derive(Debug, Default)]
pub(crate) struct Samples(Vec<Duration>);

impl Samples {
    pub(crate) fn push(&mut self, sample: Duration) {
        self.0.push(sample);
    }

    /// The middle value (the mean of the two middle ones for an even count).
    pub(crate) fn median(&self) -> Duration {
        let sorted = self.sorted();
        let n = sorted.len();
        assert!(n > 0, "a median of no samples");
        if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        }
    }

    fn sorted(&self) -> Vec<Duration> {
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        sorted
    }
}

/// The median of plain numbers (throughputs, sizes).
pub(crate) fn median(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "a median of no values");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// A median in µs with each run's beside it: `14.2 µs (15.7 · 14.1 · 14.4)`.
pub(crate) fn with_runs(median: f64, runs: &[f64]) -> String {
    let runs: Vec<String> = runs.iter().map(|run| format!("{run:.1}")).collect();
    format!("{median:.1} µs ({})", runs.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(millis: &[u64]) -> Samples {
        let mut s = Samples::default();
        for &m in millis {
            s.push(Duration::from_millis(m));
        }
        s
    }

    #[test]
    fn medians() {
        assert_eq!(samples(&[3, 1, 2]).median(), Duration::from_millis(2));
        assert_eq!(samples(&[4, 1, 2, 3]).median(), Duration::from_micros(2500));
        assert_eq!(median(&[5.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
