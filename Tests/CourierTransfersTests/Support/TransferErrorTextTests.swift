import Foundation
import Testing
import Courier
@testable import CourierTransfers

/// The transfer errors read in a log or an alert: `localizedDescription` is their description,
/// not Foundation's "The operation couldn't be completed. (CourierTransfers.DownloadError error 1.)".
@Suite("Transfer errors: localized descriptions")
struct TransferErrorTextTests {
    @Test func localizedDescriptionIsTheDescription() {
        let errors: [any Error & CustomStringConvertible] = [
            DownloadError(.lengthMismatch(expected: 10, received: 4)),
            UploadManagerError.registryUnwritable(path: "/app/uploads.json", reason: "rename(2) failed: Is a directory"),
            BackgroundDownloadError.notResumable(UUID()),
            ResumableUploadStoreError.recordUnreadable(path: "/app/tus-1.json", reason: "not a record"),
        ]
        for error in errors {
            #expect(error.localizedDescription == error.description)
            #expect(!error.localizedDescription.contains("couldn’t be completed"))
        }
    }
}
