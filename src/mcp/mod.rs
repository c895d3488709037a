//! The MCP client side: the wire (a bounded JSON-RPC line reader) and the handshake.

pub mod handshake;
pub mod wire;
