//! The rpc study's native side: does the wire format change RPC throughput?
//!
//! - [`messages`]: the get/put messages, encoded by any of our row formats through the
//!   formats crate's common interface;
//! - [`framing`]: the one length-prefixed framing, bounded;
//! - [`server`]: the tokio server holding the store's items;
//! - [`load`]: the closed-loop load generator;
//! - [`cpu`]: a server process's CPU time;
//! - [`codec_cost`]: the CPU time of the codec calls our server makes per request;
//! - [`process`]: a server in its own process, and the grid of measured runs;
//! - [`peer_store`]: the store's items as the peer servers hold them;
//! - [`thrift_peer`]: the same store behind Apache Thrift's own server;
//! - [`grpc_peer`]: the same store behind tonic's gRPC server.

pub mod codec_cost;
pub mod cpu;
pub mod framing;
pub mod grpc_peer;
pub mod load;
pub mod messages;
pub mod peer_store;
pub mod process;
pub mod server;
pub mod thrift_peer;

#[cfg(test)]
mod tests;
