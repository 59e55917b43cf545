import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// Downloads to a file against the reference server's `/media/{bytes}` (issue 11 §3): resume
/// with `Range` + `If-Range`, restarts, verification, progress, cancellation.
@Suite("Downloads (integration)", .serialized)  // one transfer at a time: the suite runs beside timing tests
struct DownloadIntegrationTests {
    static let size = 10_000_000
    static let dropAt = 4 * 1024 * 1024
    static let tag = "\"m10000000-v0\""
    /// The restart cases need no 10 MB: 2 MB dropped at 1 MiB keeps the suite light.
    static let small = 2_000_000
    static let smallDrop = 1 << 20
    static let smallTag = "\"m2000000-v0\""

    /// A server that goes silent mid-body: the download's `idleTimeout` bounds each attempt. An
    /// outside tester's stalled download took 3 × 60 s to fail, the idle timeout being fixed.
    @Test func theIdleTimeoutBoundsTheSilenceOfAServer() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        // The head at once, then one byte every 30 s: whole after 60 s if nothing cut it short.
        let request = Request<Void>.get(
            "/drip", query: ["bytes": "2", "seconds": "60", "chunks": "2"],
            policy: EndpointPolicy.standard.with(\.retry, .none))
        let start = ContinuousClock.now
        let result = await fixture.client.download(request, to: fixture.destination(), idleTimeout: .seconds(1)).result
        let elapsed = ContinuousClock.now - start
        guard case .failure(let error) = result, case .network(.timedOut) = error.reason else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        // Well before the body's first byte (30 s): the idle timeout ended it, not the server.
        // (In the first seconds of the whole parallel pass the 1 s timer fired after 9 s.)
        #expect(elapsed < .seconds(25), "failed after \(elapsed)")
    }

    @Test func aDownloadDroppedAt4MiBResumesWithRangeAndIfRangeAndIsByteIdentical() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let task = fixture.client.download(
            DownloadFixture.media(Self.size, ["dropAfter": "\(Self.dropAt)"]), to: fixture.destination())
        let progress = DownloadFixture.collect(task.progress)
        let response = try await task.value
        #expect(response.value == fixture.destination())
        #expect(response.statusCode == 206)
        // Byte-identical (stronger than equal SHA-256s; digest checks after a resume are
        // `digestsAreVerifiedOnWholeAndResumedFiles`, on 300 KB: SHA-256 is slow in debug builds).
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.size))
        #expect(fixture.leftovers() == ["file.bin"])

        let served = try await fixture.served()
        try #require(served.count == 2)
        #expect(served[0].dropped && served[0].bytesSent == Self.dropAt && served[0].range == nil)
        #expect(served[1].range == "bytes=\(Self.dropAt)-")
        #expect(served[1].ifRange == Self.tag)
        #expect(served.allSatisfy { $0.acceptEncoding == "identity" })
        #expect(served[1].status == 206 && served[1].start == Self.dropAt && served[1].bytesSent == Self.size - Self.dropAt)

        let values = await progress.value
        #expect(values.isMonotone)
        #expect(values.allSatisfy { $0.restarts == 0 })
        #expect(values.last == TransferProgress(completedBytes: Int64(Self.size), totalBytes: Int64(Self.size)))
    }

    @Test func withoutRetriesTheErrorCarriesPersistableResumeDataAndTheResumeCompletes() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let endpoint = DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)"], retries: 0)
        let failure = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure(let error) = failure, let resume = error.resumeData else {
            Issue.record("expected a resumable failure, got \(failure)")
            return
        }
        #expect(error.reason.networkKind == .transport || error.reason.networkKind == .offline)
        #expect(resume.offset == Int64(Self.smallDrop))
        #expect(resume.validator == Self.smallTag)
        #expect(resume.expectedLength == Int64(Self.small))
        #expect(!FileManager.default.fileExists(atPath: fixture.destination().path))
        #expect(try Data(contentsOf: resume.partialFileURL) == DownloadFixture.content(Self.smallDrop))
        // The user's bytes wait readable by their owner alone (they were 0644).
        let mode = try FileManager.default.attributesOfItem(atPath: resume.partialFileURL.path)[.posixPermissions]
        #expect((mode as? NSNumber)?.intValue == 0o600)

        // Persisted and read back, as an app would across launches.
        let restored = try JSONDecoder().decode(DownloadResumeData.self, from: JSONEncoder().encode(resume))
        #expect(restored == resume)
        let response = try await fixture.client.download(endpoint, to: fixture.destination(), resumingFrom: restored).value
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small))
        #expect(!FileManager.default.fileExists(atPath: resume.partialFileURL.path))
        #expect(fixture.leftovers() == ["file.bin"])
        let served = try await fixture.served()
        #expect(served.map(\.range) == [nil, "bytes=\(Self.smallDrop)-"])
        #expect(served.map(\.ifRange) == [nil, Self.smallTag])
    }

    /// The `.courier-downloads` folder and a missing folder of the destination were created 0755,
    /// and a partial file an earlier version left at 0644 kept that mode when resumed, and then at
    /// the destination: other local users could list and read the user's download.
    @Test("the partial file, the finished file and the folders made for them are their owner's alone")
    func aResumedDownloadAndItsFoldersAreTheirOwnersAlone() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let destination = fixture.folder.appendingPathComponent("statements/file.bin")
        let mode = { (url: URL) in
            try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        let endpoint = DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)"], retries: 0)
        let failure = await fixture.client.download(endpoint, to: destination).result
        guard case .failure(let error) = failure, let resume = error.resumeData else {
            Issue.record("expected a resumable failure, got \(failure)")
            return
        }
        #expect(try mode(resume.partialFileURL.deletingLastPathComponent()) == 0o700)
        #expect(try mode(destination.deletingLastPathComponent()) == 0o700)
        // As an earlier version left it.
        #expect(chmod(resume.partialFileURL.path, 0o644) == 0)

        let response = try await fixture.client.download(endpoint, to: destination, resumingFrom: resume).value
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: destination) == DownloadFixture.content(Self.small))
        #expect(try mode(destination) == 0o600)
        let served = try await fixture.served()
        #expect(served.map(\.range) == [nil, "bytes=\(Self.smallDrop)-"])
    }

    @Test func aServerWithoutRangesRestartsFromZeroAndTheFileIsCorrect() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let task = fixture.client.download(
            DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)", "ranges": "0"]), to: fixture.destination())
        let progress = DownloadFixture.collect(task.progress)
        let response = try await task.value
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small))
        let served = try await fixture.served()
        // Courier asked for the rest; the server sent the whole file, which replaced the part.
        #expect(served.map(\.range) == [nil, "bytes=\(Self.smallDrop)-"])
        #expect(served.map(\.status) == [200, 200])
        #expect(served[1].bytesSent == Self.small)
        let values = await progress.value
        #expect(values.isMonotone)
        #expect(
            values.last == TransferProgress(completedBytes: Int64(Self.small), totalBytes: Int64(Self.small), restarts: 1))
        #expect(values.contains { $0.restarts == 1 && $0.completedBytes == 0 })
    }

    @Test func aChangedValidatorRestartsWithTheNewFile() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let response = try await fixture.client.download(
            DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)", "etag": "changing"]), to: fixture.destination()
        ).value
        #expect(response.statusCode == 200)
        // If-Range carried version 0's tag; the server's file is now version 1, sent whole.
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small, version: 1))
        let served = try await fixture.served()
        #expect(served.map(\.ifRange) == [nil, "\"m2000000-v0\""])
        #expect(served.map(\.etag) == ["\"m2000000-v0\"", "\"m2000000-v1\""])
        #expect(served.map(\.status) == [200, 200])
    }

    @Test func a206ForAnotherValidatorIsDiscardedAndTheWholeFileFetchedAgain() async throws {
        // A broken server that ignores If-Range: its 206 belongs to version 1, the part on disk
        // to version 0. Gluing them would corrupt the file; Courier asks again without Range.
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let response = try await fixture.client.download(
            DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)", "etag": "changing", "ifRange": "ignore"]),
            to: fixture.destination()
        ).value
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small, version: 2))
        let served = try await fixture.served()
        #expect(served.map(\.status) == [200, 206, 200])
        #expect(served.map(\.range) == [nil, "bytes=\(Self.smallDrop)-", nil])
    }

    @Test func a206ThatDoesNotStartAtTheOffsetIsDiscarded() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let response = try await fixture.client.download(
            DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)", "rangeStart": "zero"]), to: fixture.destination()
        ).value
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small))
        let served = try await fixture.served()
        #expect(served.map(\.status) == [200, 206, 200])
        #expect(served[1].start == 0)
    }

    @Test func a416ForTheBytesAlreadyReceivedCompletesTheFile() async throws {
        // The process died after the last byte and before the move: the partial file is whole.
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let size = 100_000
        let endpoint = DownloadFixture.media(size, ["dropAfter": "\(size - 1)"], retries: 0)
        let first = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure(let error) = first, let resume = error.resumeData else {
            Issue.record("expected resume data, got \(first)")
            return
        }
        let handle = try FileHandle(forWritingTo: resume.partialFileURL)
        try handle.seekToEnd()
        try handle.write(contentsOf: DownloadFixture.content(size).suffix(1))
        try handle.close()
        let whole = try JSONDecoder().decode(
            DownloadResumeData.self,
            from: JSONSerialization.data(withJSONObject: [
                "url": resume.url.absoluteString, "offset": size, "validator": resume.validator,
                "expectedLength": size, "partialFileURL": resume.partialFileURL.absoluteString,
            ]))
        let response = try await fixture.client.download(endpoint, to: fixture.destination(), resumingFrom: whole).value
        #expect(response.statusCode == 416)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(size))
        #expect(try await fixture.served().map(\.status) == [200, 416])
        #expect(fixture.leftovers() == ["file.bin"])
    }

    @Test func progressIsMonotoneAndEndsAtTheTotal() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let task = fixture.client.download(DownloadFixture.media(Self.small), to: fixture.destination())
        let progress = DownloadFixture.collect(task.progress)
        _ = try await task.value
        let values = await progress.value
        #expect(values.count >= 2)
        #expect(values.isMonotone)
        #expect(values.allSatisfy { $0.totalBytes == nil || $0.totalBytes == Int64(Self.small) })
        #expect(values.last?.completedBytes == Int64(Self.small))
        #expect(values.last?.fractionCompleted == 1)
    }

    @Test(arguments: [["chunked": "1"], ["gzip": "always"]])
    func theTotalIsUnknownForChunkedOrCompressedBodies(_ variant: [String: String]) async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let size = 1_000_000
        let task = fixture.client.download(DownloadFixture.media(size, variant), to: fixture.destination())
        let progress = DownloadFixture.collect(task.progress)
        _ = try await task.value
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(size))
        let values = await progress.value
        #expect(values.allSatisfy { $0.totalBytes == nil && $0.fractionCompleted == nil })
        #expect(values.last?.completedBytes == Int64(size))
        #expect(values.isMonotone)
    }

    @Test func cancellingLeavesNothingAtTheDestinationAndAUsableResumeValue() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        // The server sends 1 MB, then waits (up to 10 s) before the rest: the cancel lands mid-body.
        let endpoint = DownloadFixture.media(Self.small, ["stallAfter": "1000000"])
        let task = fixture.client.download(endpoint, to: fixture.destination())
        for await value in task.progress where value.completedBytes >= 1_000_000 {
            task.cancel()
            break
        }
        let result = await task.result
        guard case .failure(let error) = result, let resume = error.resumeData else {
            Issue.record("expected a cancellation with resume data, got \(result)")
            return
        }
        #expect(error.isCancellation)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination().path))
        #expect(resume.offset == 1_000_000)
        #expect(try Data(contentsOf: resume.partialFileURL) == DownloadFixture.content(Int(resume.offset)))

        let response = try await fixture.client.download(endpoint, to: fixture.destination(), resumingFrom: resume).value
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small))
        #expect(try await fixture.served().last?.range == "bytes=\(resume.offset)-")
        #expect(fixture.leftovers() == ["file.bin"])
    }

    @Test func resumeDataForAnotherURLStartsFromZeroAndDeletesItsPartialFile() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let failed = await fixture.client.download(
            DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)"], retries: 0), to: fixture.destination()
        ).result
        guard case .failure(let error) = failed, let resume = error.resumeData else {
            Issue.record("expected resume data, got \(failed)")
            return
        }
        let other = DownloadFixture.media(1_000_000)
        let response = try await fixture.client.download(other, to: fixture.destination(), resumingFrom: resume).value
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(1_000_000))
        #expect(!FileManager.default.fileExists(atPath: resume.partialFileURL.path))
        #expect(try await fixture.served().map(\.range) == [nil, nil])
        #expect(fixture.leftovers() == ["file.bin"])
    }

    @Test(arguments: ["directory", "directory URL", "web URL"])
    func aDestinationThatCannotTakeAFileFailsAtOnceAndSendsNothing(_ kind: String) async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let destination: URL
        if kind == "directory" {
            destination = fixture.destination("folder")
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        } else if kind == "directory URL" {
            // A trailing slash names a folder, also one that does not exist yet.
            destination = URL(fileURLWithPath: fixture.destination("new-folder").path + "/", isDirectory: true)
        } else {
            destination = try #require(URL(string: "https://example.com/file.bin"))
        }
        let result = await fixture.client.download(DownloadFixture.media(Self.small), to: destination).result
        guard case .failure(let error) = result, case .fileSystem(let text) = error.reason else {
            Issue.record("expected a file-system error, got \(result)")
            return
        }
        #expect(text.contains(kind.hasPrefix("directory") ? "is a directory" : "is not a file URL"), "\(text)")
        #expect(error.resumeData == nil)
        #expect(try await fixture.served().isEmpty)
        #expect(fixture.leftovers() == (kind == "directory" ? ["folder"] : []))
    }

    @Test func aNewDownloadDeletesPartialFilesUntouchedForSevenDaysAndKeepsRecentOnes() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let partials = fixture.folder.appendingPathComponent(".courier-downloads", isDirectory: true)
        try FileManager.default.createDirectory(at: partials, withIntermediateDirectories: true)
        let old = partials.appendingPathComponent("old.partial")
        let recent = partials.appendingPathComponent("recent.partial")
        for url in [old, recent] { try Data("left by a crash".utf8).write(to: url) }
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -8 * 24 * 3600)], ofItemAtPath: old.path)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -6 * 24 * 3600)], ofItemAtPath: recent.path)
        _ = try await fixture.client.download(DownloadFixture.media(Self.small), to: fixture.destination()).value
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small))
    }

    @Test func aDownloadIntoAFolderThatDoesNotExistCreatesIt() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let destination = fixture.destination("new").appendingPathComponent("deeper").appendingPathComponent("file.bin")
        let response = try await fixture.client.download(DownloadFixture.media(Self.small), to: destination).value
        #expect(response.value == destination)
        #expect(try Data(contentsOf: destination) == DownloadFixture.content(Self.small))
    }

    @Test func aDigestMismatchFailsWithATypedErrorAndLeavesNothing() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let result = await fixture.client.download(DownloadFixture.media(300_000, ["digest": "bad"]), to: fixture.destination())
            .result
        guard case .failure(let error) = result, case .digestMismatch(let field, let expected, let actual) = error.reason else {
            Issue.record("expected a digest mismatch, got \(result)")
            return
        }
        #expect(field == "Repr-Digest")
        #expect(actual == SHA256Hex.of(DownloadFixture.content(300_000)))
        #expect(expected != actual)
        #expect(error.resumeData == nil)
        #expect(fixture.leftovers().isEmpty)
    }

    @Test(arguments: ["repr", "legacy", "content"])
    func digestsAreVerifiedOnWholeAndResumedFiles(_ kind: String) async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let size = 300_000
        _ = try await fixture.client.download(
            DownloadFixture.media(size, ["digest": kind, "dropAfter": "100000"]), to: fixture.destination()
        ).value
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(size))
        #expect(try await fixture.served().map(\.status) == [200, 206])
    }

    @Test(arguments: [["etag": "weak"], ["etag": "none", "lastModified": "now"]])
    func withoutAStrongValidatorThereIsNoResumeDataAndNoPartialFile(_ variant: [String: String]) async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let result = await fixture.client.download(
            DownloadFixture.media(Self.small, variant.merging(["dropAfter": "\(Self.smallDrop)"]) { $1 }, retries: 0),
            to: fixture.destination()
        ).result
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.resumeData == nil)
        #expect(fixture.leftovers().isEmpty)
        // With retries, the second attempt asks for the whole file again (no Range).
        _ = try await fixture.client.download(
            DownloadFixture.media(Self.small, variant.merging(["dropAfter": "\(Self.smallDrop)", "drops": "2"]) { $1 }),
            to: fixture.destination()
        ).value
        let served = try await fixture.served()
        #expect(served.map(\.range) == [nil, nil, nil], "\(served)")
    }

    @Test func aStrongLastModifiedIsUsedInIfRangeWhenThereIsNoEntityTag() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        _ = try await fixture.client.download(
            DownloadFixture.media(Self.small, ["dropAfter": "\(Self.smallDrop)", "etag": "none"]), to: fixture.destination()
        ).value
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.small))
        let served = try await fixture.served()
        #expect(served.map(\.ifRange) == [nil, "Thu, 01 Jan 2026 00:00:00 GMT"])
        #expect(served.map(\.status) == [200, 206])
    }
}

extension DownloadError.Reason {
    /// The ``NetworkError/Kind`` of a network reason.
    var networkKind: NetworkError.Kind? {
        if case .network(let error) = self { return error.kind }
        return nil
    }
}

/// SHA-256 in hex, for comparing files (Courier's own implementation, package access).
enum SHA256Hex {
    static func of(_ data: Data) -> String {
        DownloadDigest.hex(Courier.SHA256.hash(data))
    }
}
