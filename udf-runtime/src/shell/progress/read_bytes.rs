//! The bytes a query reads from local files, counted as they arrive: the shell puts this store
//! in front of the local file system while it shows progress. DataFusion reports bytes read
//! only for Parquet; counting here covers CSV and JSON too, and counts what was read so far
//! rather than what was asked for (a CSV file is asked for whole, then read over seconds).

use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

/// How much of a local file one blocking read takes.
const CHUNK: u64 = 1 << 20;

/// An object store that counts the bytes its readers received.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    read: Arc<AtomicU64>,
}

impl CountingStore {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        CountingStore {
            inner,
            read: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Bytes received so far, by every reader since the store was made.
    pub fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.read)
    }
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "counting bytes read of {}", self.inner)
    }
}

#[async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        options: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, options).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        options: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, options).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let mut result = self.inner.get_opts(location, options).await?;
        if head {
            return Ok(result);
        }
        let read = Arc::clone(&self.read);
        let payload = std::mem::replace(
            &mut result.payload,
            GetResultPayload::Stream(futures::stream::empty().boxed()),
        );
        let stream = match payload {
            // A local file is read by its reader through the handle, unseen: read it here.
            GetResultPayload::File(file, _) => file_chunks(file, result.range.clone()),
            GetResultPayload::Stream(stream) => stream,
        };
        result.payload = GetResultPayload::Stream(
            stream
                .inspect_ok(move |chunk| {
                    read.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                })
                .boxed(),
        );
        Ok(result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

/// `range` of `file` as a stream of chunks, each read on the blocking pool.
fn file_chunks(
    file: std::fs::File,
    range: Range<u64>,
) -> BoxStream<'static, object_store::Result<Bytes>> {
    let start = (file, range.start, range.end, false);
    futures::stream::try_unfold(start, |(mut file, at, end, seeked)| async move {
        if at >= end {
            return Ok(None);
        }
        let (file, chunk) = tokio::task::spawn_blocking(move || {
            if !seeked {
                file.seek(SeekFrom::Start(at))?;
            }
            let mut chunk = Vec::with_capacity(CHUNK.min(end - at) as usize);
            (&mut file)
                .take(CHUNK.min(end - at))
                .read_to_end(&mut chunk)?;
            Ok::<_, std::io::Error>((file, chunk))
        })
        .await
        .map_err(|error| generic(error.to_string()))?
        .map_err(|error| generic(error.to_string()))?;
        if chunk.is_empty() {
            return Err(generic(format!(
                "the file ended at byte {at}, before the {end} bytes it was said to hold"
            )));
        }
        let next = at + chunk.len() as u64;
        Ok(Some((Bytes::from(chunk), (file, next, end, true))))
    })
    .boxed()
}

fn generic(message: String) -> object_store::Error {
    object_store::Error::Generic {
        store: "local files",
        source: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;
    use object_store::local::LocalFileSystem;

    #[tokio::test]
    async fn counts_what_readers_received_of_whole_files_and_ranges() {
        let dir = std::env::temp_dir().join(format!("udf-read-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let contents: Vec<u8> = (0..(3 * CHUNK + 17)).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("data.bin"), &contents).unwrap();
        let store = CountingStore::new(Arc::new(LocalFileSystem::new_with_prefix(&dir).unwrap()));
        let counter = store.counter();
        let path = Path::from("data.bin");

        let whole = store.get(&path).await.unwrap().bytes().await.unwrap();
        assert_eq!(whole.as_ref(), contents.as_slice());
        assert_eq!(counter.load(Ordering::Relaxed), contents.len() as u64);

        let part = store.get_range(&path, 1000..(CHUNK + 1010)).await.unwrap();
        assert_eq!(part.as_ref(), &contents[1000..(CHUNK + 1010) as usize]);
        assert_eq!(
            counter.load(Ordering::Relaxed),
            contents.len() as u64 + CHUNK + 10
        );

        // Metadata alone reads nothing.
        store.head(&path).await.unwrap();
        assert_eq!(
            counter.load(Ordering::Relaxed),
            contents.len() as u64 + CHUNK + 10
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
