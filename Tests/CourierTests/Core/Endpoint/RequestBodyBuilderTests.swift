import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// `Request.post/put/patch` take a `RequestBody` as well as an `Encodable` (issue 24): the
    /// natural forms of the docs, `.post("/photos", body: .file(url))` (`body: .multipart(form)`:
    /// CourierTransfersTests).
    @Suite struct RequestBodyBuilders {
        struct Photo: Decodable, Sendable { var id: Int }
        struct NewItem: Encodable, Sendable { var name: String }

        @Test("a RequestBody case is sent as it is, with its method, for a decoded and a Void response")
        func requestBodyCases() {
            let jpeg = Data([0xFF, 0xD8])
            let post = Request<Photo>.post("/photos", body: .data(jpeg, contentType: "image/jpeg"))
            #expect(post.method == .post)
            guard case .data(let sent, let type) = post.body else {
                Issue.record("expected a data body, got \(post.body)")
                return
            }
            #expect(sent == jpeg && type == "image/jpeg")

            let put = Request<Void>.put("/avatar", body: .file(URL(fileURLWithPath: "/tmp/a.jpg"), contentType: "image/jpeg"))
            #expect(put.method == .put)
            guard case .stream(_, let contentType) = put.body else {
                Issue.record("expected a stream body, got \(put.body)")
                return
            }
            #expect(contentType == "image/jpeg")

            let patch = Request<Photo>.patch("/photos/1", body: .json(NewItem(name: "Lamp")), policy: .authorizedWrite)
            #expect(patch.method == .patch)
            #expect(patch.policy.auth == EndpointPolicy.authorizedWrite.auth)
            guard case .json = patch.body else {
                Issue.record("expected a JSON body, got \(patch.body)")
                return
            }
        }

        @Test("an Encodable value is still sent as JSON, and no body stays none")
        func encodableStillJSON() {
            let post = Request<Void>.post("/items", body: NewItem(name: "Lamp"))
            guard case .json = post.body else {
                Issue.record("expected a JSON body, got \(post.body)")
                return
            }
            #expect(Request<Void>.post("/items").body.isEmpty)
        }
    }
}
