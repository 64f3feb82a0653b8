//! The grep result cache: small result sets kept whole so later pages are
//! slices, and the limits of the background fill that completes them.

use std::time::Duration;

use super::GrepMatch;

/// Every match of a grep query, with positions.
pub struct GrepAll {
    pub matches: Vec<GrepMatch>,
    pub positions: Vec<(u64, u64)>,
}

/// How long the first page's scan goes on filling the grep cache once it
/// has a page of matches (short: with the n-gram index the page is usually
/// ready in a few milliseconds); past it the page is answered and the scan
/// goes on in the background ([`Server::fill_grep_cache`]).
pub const FIRST_PAGE_FILL: Duration = Duration::from_millis(0);
/// Longest background scan filling the grep cache.
pub const GREP_FILL_BUDGET: Duration = Duration::from_secs(2);
/// Largest result set kept whole in the grep cache.
pub const GREP_CACHE_MATCHES: usize = 5_000;
