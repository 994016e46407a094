//! shapeshift's lab layer (native side): the study's datasets and the measurements that must
//! run without Python in the way. Statistics and the report live in the Python package
//! (`shapeshift.lab`), which calls these through the `shapeshift` CLI's JSON output.

pub mod codec_bench;
pub mod datasets;
pub mod format_bench;
pub mod measure;
pub mod peer_baselines;
pub mod rpc;
pub mod scenarios;
pub mod serializers;
