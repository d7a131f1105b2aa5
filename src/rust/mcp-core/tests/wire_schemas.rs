//! The official wire schemas the other tests check messages against are in
//! the repository, for every revision, and do reject bad messages: a wire
//! check can never pass by having nothing to check against.

mod common;

use mcp_core::protocol::revision::Revision;
use serde_json::json;

#[test]
fn every_revision_has_its_schema_in_the_repository() {
    for rev in Revision::ALL {
        let path = common::schema_dir().join(rev.as_str()).join("schema.json");
        assert!(path.is_file(), "{} is missing", path.display());
        let mut good = json!({"content": [{"type": "text", "text": "ok"}]});
        if rev.is_modern() {
            good["resultType"] = json!("complete");
        }
        let mut bad = good.clone();
        bad["content"][0]["type"] = json!("txet");
        let validator = common::definition(rev, "CallToolResult");
        assert!(validator.is_valid(&good), "{rev} rejects a valid result");
        assert!(!validator.is_valid(&bad), "{rev} accepts an invalid block");
    }
}
