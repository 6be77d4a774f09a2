//! Test fixtures shared by the transforms' unit tests.

use serde_json::{json, Value};

/// One Anthropic programmatic tool calling exchange (`i` names its ids): the user's
/// question; the model's `code_execution` call and the client call its code makes (`caller`
/// names the server call); the client tool's result; the server tool's result, in the next
/// response, and the answer.
pub(crate) fn ptc(i: usize, result_tokens: usize) -> Vec<Value> {
    let (s, t) = (format!("srvtoolu_{i}"), format!("toolu_{i}"));
    vec![
        json!({"role": "user", "content": format!("question {i}")}),
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "In code."},
            {"type": "server_tool_use", "id": s, "name": "code_execution", "input": {"code": "get()"}},
            {"type": "tool_use", "id": t, "name": "get", "input": {},
             "caller": {"type": "code_execution_20250825", "tool_id": s}}]}),
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": t, "content": "r".repeat(result_tokens * 4)}]}),
        json!({"role": "assistant", "content": [
            {"type": "code_execution_tool_result", "tool_use_id": s,
             "content": {"type": "code_execution_result", "stdout": "ok", "stderr": "", "return_code": 0, "content": []}},
            {"type": "text", "text": format!("answer {i}")}]}),
    ]
}
