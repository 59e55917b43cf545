import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A recorded multipart upload replays although every form gets a new random boundary: the
/// fixture's body digest is taken with the boundary replaced by a fixed one.
@Suite(.timeLimit(.minutes(1))) struct MultipartReplayTests {
    static func avatarForm() throws -> MultipartForm {
        var form = MultipartForm()
        try form.addField(named: "caption", value: "me")
        try form.addFile(
            named: "avatar", data: Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3]), filename: "a.png", contentType: "image/png")
        return form
    }

    @Test func aRecordedUploadReplaysWithANewBoundaryButNotWithOtherBytes() async throws {
        let recorder = HARFixtureRecorder()
        let recording = APIClient(environment: .stub) {
            $0.transport = StubTransport { _ in .status(204) }
            $0.interceptors = [RetryInterceptor(maximumRetries: 0), recorder]
        }
        try await recording.send(Request<Void>(method: .post, path: "/avatar", body: .multipart(try Self.avatarForm())))

        let replay = ReplayTransport(archive: recorder.archive())
        let client = APIClient(environment: .stub) { $0.transport = replay }
        // The same upload, built again by the app (a new form, so a new random boundary).
        try await client.send(Request<Void>(method: .post, path: "/avatar", body: .multipart(try Self.avatarForm())))
        #expect(replay.mismatches.isEmpty, "\(replay.mismatches.map(\.description))")

        // Another file is another request.
        var other = MultipartForm()
        try other.addField(named: "caption", value: "me")
        try other.addFile(
            named: "avatar", data: Data([0x89, 0x50, 0x4E, 0x47, 9, 9, 9]), filename: "a.png", contentType: "image/png")
        let second = ReplayTransport(archive: recorder.archive())
        await #expect(throws: (any Error).self) {
            try await APIClient(environment: .stub) { $0.transport = second }
                .send(Request<Void>(method: .post, path: "/avatar", body: .multipart(other)))
        }
        #expect(second.mismatches.count == 1)
    }
}
