//! The server every shape shares: one tool, `ping`, that returns "pong" (and, for the
//! slow-tool shape, `slow`, which answers after 3 s). Written against the `ServerHandler`
//! trait directly, without rmcp's macros, whose syntax changed more often than the trait.
//! The names that changed across releases come from the kit's variant of this version:
//! error `{{rmcp_error}}`, call parameters `{{rmcp_call_params}}`, list parameters
//! `{{rmcp_list_arg}}`, content `{{rmcp_content}}`, call result `{{rmcp_call_result}}`.
//! Nothing here writes to stdout, which is the MCP wire.

use std::sync::Arc;
use std::time::Duration;

use rmcp::{
    model::{
        CallToolResult, {{rmcp_call_params}}, {{rmcp_content}}, JsonObject, ListToolsResult,
        {{rmcp_list_params}}, ServerCapabilities, ServerInfo, Tool,
    },
    service::RequestContext,
    {{rmcp_error}} as McpError, RoleServer, ServerHandler,
};

/// One line to stderr, prefixed with the instance's name.
pub fn log(shape: &str, message: &str) {
    eprintln!("{{line}}-{{label}}-{shape}: {message}");
}

#[derive(Clone)]
pub struct Ping {
    shape: &'static str,
    slow: bool,
}

impl Ping {
    pub fn new(shape: &'static str) -> Self {
        Self { shape, slow: false }
    }

    pub fn with_slow_tool(shape: &'static str) -> Self {
        Self { shape, slow: true }
    }

    fn tool(name: &'static str, description: &'static str) -> Tool {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), JsonObject::new().into());
        Tool::new(name, description, Arc::new(schema))
    }
}

impl ServerHandler for Ping {
    fn get_info(&self) -> ServerInfo {
        // Field by field: the struct is #[non_exhaustive] from rmcp 1.0 on, so no literal.
        let mut info = ServerInfo::default();
        info.capabilities = {{rmcp_capabilities}};
        info.server_info.name = format!("{{line}}-{{label}}-{}", self.shape);
        info.server_info.version = "0.0.0".into();
        info
    }

    async fn list_tools(
        &self,
        _request: {{rmcp_list_arg}},
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut tools = vec![Self::tool("ping", "Answers pong")];
        if self.slow {
            tools.push(Self::tool("slow", "Answers done after 3 s"));
        }
        Ok({{rmcp_list_result}})
    }

    async fn call_tool(
        &self,
        request: {{rmcp_call_params}},
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::{{rmcp_call_result}}, McpError> {
        let text = match &*request.name {
            "ping" => "pong",
            "slow" if self.slow => {
                tokio::time::sleep(Duration::from_secs(3)).await;
                "done"
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown tool: {other}"),
                    None,
                ))
            }
        };
        #[allow(clippy::useless_conversion)]
        Ok(CallToolResult::success(vec![{{rmcp_content}}::text(text)]).into())
    }
}
