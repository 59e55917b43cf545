import Foundation
import Testing
@testable import Courier

extension CodingTests {
    @Suite struct EmptyResponseTests {
        @Test(arguments: [#"{}"#, #"[]"#, #"null"#, #""text""#, #"42"#, #"{"ignored":[1,2,3]}"#])
        func decodesFromAnyJSONValue(_ text: String) throws {
            #expect(try JSONDecoder().decode(EmptyResponse.self, from: Data(text.utf8)) == EmptyResponse())
        }

        @Test func encodesAsEmptyObject() throws {
            #expect(String(decoding: try JSONEncoder().encode(EmptyResponse()), as: UTF8.self) == "{}")
        }

        static func noneValue<T>(of type: T.Type) -> T? {
            guard let marker = type as? any OptionalMarker.Type else { return nil }
            return marker.noneValue as? T
        }

        @Test func optionalMarkerProducesNil() throws {
            let none = try #require(Self.noneValue(of: Int?.self))
            #expect(none == nil)
            #expect(Self.noneValue(of: Int.self) == nil)
        }
    }
}
