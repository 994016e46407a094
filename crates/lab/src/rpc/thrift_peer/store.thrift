// The rpc study's store as an Apache Thrift service, for Thrift's own server.
// MediaContent is jvm-serializers' tpc/schema/media.thrift (enums as i32, as in the study's
// other schemas). Generated code: store.rs, by the Apache Thrift compiler 0.17.0
// (`thrift --gen rs -out . store.thrift`, Debian's thrift-compiler package), checked in so the
// build needs no compiler.

namespace rs shapeshift.rpc

struct Image {
  1: required string uri,
  2: optional string title,
  3: required i32 width,
  4: required i32 height,
  5: required i32 size,
}

struct Media {
  1: required string uri,
  2: optional string title,
  3: required i32 width,
  4: required i32 height,
  5: required string format,
  6: required i64 duration,
  7: required i64 size,
  8: optional i32 bitrate,
  9: required list<string> person,
  10: required i32 player,
  11: optional string copyright,
}

struct MediaContent {
  1: required list<Image> image,
  2: required Media media,
}

exception NotFound {
  1: i32 key,
}

service Store {
  binary getTiny(1: i32 key) throws (1: NotFound notFound),
  void putTiny(1: i32 key, 2: binary value) throws (1: NotFound notFound),
  MediaContent getMedia(1: i32 key) throws (1: NotFound notFound),
  void putMedia(1: i32 key, 2: MediaContent value) throws (1: NotFound notFound),
}
