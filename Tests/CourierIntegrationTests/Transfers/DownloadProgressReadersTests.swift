import Foundation
import Testing
import Courier
import CourierTransfers

/// `DownloadTask.progress` with several readers (a list row and a detail screen showing one
/// download): each reader gets the values from the latest one to the download's end.
@Suite("Download progress read by several readers (reference server)", .serialized)
struct DownloadProgressReadersTests {
    @Test("every reader of a download's progress, a late one too, ends at the total; a reader that stops early stops alone")
    func everyReaderEndsAtTheTotal() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let size = 1_000_000
        let task = fixture.client.download(DownloadFixture.media(size), to: fixture.destination())
        let readers = (0..<3).map { _ in DownloadFixture.collect(task.progress) }
        let early = Task {
            var iterator = task.progress.makeAsyncIterator()
            return await iterator.next()
        }
        _ = try await task.value
        let late = DownloadFixture.collect(task.progress)

        for reader in readers + [late] {
            let values = await outcome(of: reader)
            #expect(
                values?.last?.completedBytes == Int64(size), "a reader did not end at the total: \(String(describing: values))")
            #expect(values?.isMonotone == true)
        }
        #expect(await outcome(of: early) != nil)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(size))
        #expect(try await fixture.served().map(\.status) == [200])
    }

    @Test("cancelling a download ends every reader's progress")
    func cancellingEndsEveryReader() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        // The server sends 100 kB, then waits at a gate nobody opens: the cancel lands mid-body.
        // (A 10 s wait was not enough on a loaded machine: the download ended before the cancel.)
        let task = fixture.client.download(
            DownloadFixture.media(2_000_000, ["stallAfter": "100000", "stallGate": "never"]), to: fixture.destination())
        let readers = (0..<2).map { _ in DownloadFixture.collect(task.progress) }
        for await value in task.progress where value.completedBytes >= 100_000 {
            task.cancel()
            break
        }
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.isCancellation)
        for reader in readers {
            #expect(await outcome(of: reader) != nil, "a reader's progress did not end after the cancellation")
        }
        #expect(try await fixture.served().count == 1)
    }
}
