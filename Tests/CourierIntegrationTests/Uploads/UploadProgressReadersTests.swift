import Foundation
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// `Upload.progress` with several readers (a list row and a detail screen showing one upload):
/// each reader gets the values from the latest one to the upload's end.
@Suite("Upload progress read by several readers (reference server)")
struct UploadProgressReadersTests {
    @Test("every reader of an upload's progress, a late one too, ends at the total; a reader that stops early stops alone")
    func everyReaderEndsAtTheTotal() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(1 << 20, seed: 5)
        let upload = client.upload(
            UploadIntegrationTests.count(.data(data, contentType: "application/octet-stream"), query: ["delay": "0.05"]))
        let readers = (0..<3).map { _ in collect(upload.progress) }
        let early = Task {
            var iterator = upload.progress.makeAsyncIterator()
            return await iterator.next()
        }
        let result = try await upload.value
        let late = collect(upload.progress)
        let total = TransferProgress(completedBytes: Int64(data.count), totalBytes: Int64(data.count))

        for reader in readers + [late] {
            let values = await outcome(of: reader)
            #expect(values?.last == total, "a reader did not end at the total: \(String(describing: values))")
            #expect(values.map { zip($0, $0.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes } } == true)
        }
        #expect(await outcome(of: early) != nil)
        #expect(result.bytes == data.count)
        let stats = try await TestServers.stats(namespace: namespace)
        let uploads = try #require(stats["uploads"] as? [String: Any])
        #expect(uploads["attempts"] as? Int == 1)
        #expect(uploads["bytes"] as? Int == data.count)
    }

    @Test("cancelling an upload ends every reader's progress")
    func cancellingEndsEveryReader() async throws {
        let (client, _) = try UploadFixtures.client()
        // The server reads 256 KiB a second and answers only once its gate opens, which
        // nobody opens: the upload cannot end before the cancel. (With the slow reads alone, a loaded machine
        // delivered the first progress value after the server had answered, 16 s later.)
        let gate = "answer"
        let upload = client.upload(
            UploadIntegrationTests.count(
                .data(UploadFixtures.bytes(4 << 20), contentType: "application/octet-stream"),
                query: ["delay": "1", "gate": gate]))
        let readers = (0..<2).map { _ in collect(upload.progress) }
        do {
            var first = upload.progress.makeAsyncIterator()
            _ = await first.next()
        }
        let later = collect(upload.progress)
        upload.cancel()
        await #expect(throws: NetworkError.cancelled) { _ = try await upload.value }
        for reader in readers + [later] {
            #expect(await outcome(of: reader) != nil, "a reader's progress did not end after the cancellation")
        }
    }
}
