//! The MCP protocol revisions the server speaks, and what each one allows on
//! the wire. Every per-revision decision in the crate asks one of these
//! predicates, so the revision matrix lives in one place.

use std::fmt;

/// A protocol revision. Ordered by release date, so `a < b` means `a` is older.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl Revision {
    /// Every revision, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The newest handshake-era revision: the counter-offer for any version
    /// `initialize` does not know.
    pub const LATEST_LEGACY: Revision = Revision::V2025_11_25;

    /// The newest revision overall.
    pub const LATEST: Revision = Revision::V2026_07_28;

    pub fn parse(text: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Stateless-era revision: per-request `_meta` envelope, no handshake.
    pub fn is_modern(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// Revisions `initialize` may negotiate.
    pub fn legacy() -> impl Iterator<Item = Revision> {
        Revision::ALL.into_iter().filter(|r| !r.is_modern())
    }

    /// Revisions `server/discover` advertises.
    pub fn modern() -> impl Iterator<Item = Revision> {
        Revision::ALL.into_iter().filter(|r| r.is_modern())
    }

    /// JSON-RPC batches exist only in 2025-03-26.
    pub fn allows_batches(self) -> bool {
        self == Revision::V2025_03_26
    }

    pub fn has_audio(self) -> bool {
        self >= Revision::V2025_03_26
    }

    pub fn has_tool_annotations(self) -> bool {
        self >= Revision::V2025_03_26
    }

    pub fn has_progress_message(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// `resource_link` blocks, tool `title`, `outputSchema`,
    /// `structuredContent`, and `_meta` on tools and content blocks.
    pub fn has_structured_output(self) -> bool {
        self >= Revision::V2025_06_18
    }

    pub fn has_resource_link(self) -> bool {
        self >= Revision::V2025_06_18
    }

    pub fn has_last_modified(self) -> bool {
        self >= Revision::V2025_06_18
    }

    pub fn has_elicitation(self) -> bool {
        self >= Revision::V2025_06_18
    }

    pub fn has_icons(self) -> bool {
        self >= Revision::V2025_11_25
    }

    /// Task-augmented requests as a core feature (`execution.taskSupport`).
    pub fn has_core_tasks(self) -> bool {
        self == Revision::V2025_11_25
    }

    /// Output schemas and structured content with a non-object root.
    pub fn allows_any_output_root(self) -> bool {
        self >= Revision::V2026_07_28
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_revision_and_nothing_else() {
        for r in Revision::ALL {
            assert_eq!(Revision::parse(r.as_str()), Some(r));
        }
        for bad in ["", "2024-10-07", "2025-11-25 ", "latest", "2026-07-29"] {
            assert_eq!(Revision::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn eras_partition_the_revisions() {
        let legacy: Vec<_> = Revision::legacy().collect();
        let modern: Vec<_> = Revision::modern().collect();
        assert_eq!(legacy.len() + modern.len(), Revision::ALL.len());
        assert_eq!(modern, vec![Revision::V2026_07_28]);
        assert!(legacy.contains(&Revision::LATEST_LEGACY));
        assert!(!Revision::LATEST_LEGACY.is_modern());
    }

    #[test]
    fn feature_matrix_follows_the_changelogs() {
        use Revision::*;
        assert!(!V2024_11_05.has_audio() && V2025_03_26.has_audio());
        assert!(!V2025_03_26.has_resource_link() && V2025_06_18.has_resource_link());
        assert!(!V2025_03_26.has_structured_output() && V2025_06_18.has_structured_output());
        assert!(!V2025_06_18.has_icons() && V2025_11_25.has_icons());
        assert!(V2025_03_26.allows_batches() && !V2025_06_18.allows_batches());
        assert!(!V2024_11_05.allows_batches());
        assert!(!V2025_11_25.allows_any_output_root() && V2026_07_28.allows_any_output_root());
    }
}
