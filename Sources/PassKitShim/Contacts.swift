// The part of Apple's Contacts framework PassKit's contacts use (CNPostalAddress, CNPhoneNumber and the postal
// address keys), for platforms without it.

import Foundation

/// The street key of a postal address error (`CNPostalAddressStreetKey`).
public let CNPostalAddressStreetKey = "street"
/// The sub-locality key (`CNPostalAddressSubLocalityKey`).
public let CNPostalAddressSubLocalityKey = "subLocality"
/// The city key (`CNPostalAddressCityKey`).
public let CNPostalAddressCityKey = "city"
/// The sub-administrative area key (`CNPostalAddressSubAdministrativeAreaKey`).
public let CNPostalAddressSubAdministrativeAreaKey = "subAdministrativeArea"
/// The state key (`CNPostalAddressStateKey`).
public let CNPostalAddressStateKey = "state"
/// The postal code key (`CNPostalAddressPostalCodeKey`).
public let CNPostalAddressPostalCodeKey = "postalCode"
/// The country key (`CNPostalAddressCountryKey`).
public let CNPostalAddressCountryKey = "country"
/// The ISO country code key (`CNPostalAddressISOCountryCodeKey`).
public let CNPostalAddressISOCountryCodeKey = "ISOCountryCode"

/// An immutable postal address (Contacts' `CNPostalAddress`); every field is a string, empty when unknown.
open class CNPostalAddress: NSObject {
    var storage: [String: String] = [:]

    /// An empty address.
    public override init() { super.init() }

    func field(_ key: String) -> String { storage[key] ?? "" }

    /// The street lines, separated by newlines.
    open var street: String { field(CNPostalAddressStreetKey) }
    /// The sub-locality.
    open var subLocality: String { field(CNPostalAddressSubLocalityKey) }
    /// The city.
    open var city: String { field(CNPostalAddressCityKey) }
    /// The sub-administrative area.
    open var subAdministrativeArea: String { field(CNPostalAddressSubAdministrativeAreaKey) }
    /// The state or province.
    open var state: String { field(CNPostalAddressStateKey) }
    /// The postal code.
    open var postalCode: String { field(CNPostalAddressPostalCodeKey) }
    /// The country's name.
    open var country: String { field(CNPostalAddressCountryKey) }
    /// The ISO 3166-1 country code (as the device has it, often lower case).
    open var isoCountryCode: String { field(CNPostalAddressISOCountryCodeKey) }
}

/// A postal address that can be changed (Contacts' `CNMutablePostalAddress`).
open class CNMutablePostalAddress: CNPostalAddress {
    /// An empty address.
    public override init() { super.init() }

    /// The street lines, separated by newlines.
    open override var street: String {
        get { field(CNPostalAddressStreetKey) }
        set { storage[CNPostalAddressStreetKey] = newValue }
    }
    /// The sub-locality.
    open override var subLocality: String {
        get { field(CNPostalAddressSubLocalityKey) }
        set { storage[CNPostalAddressSubLocalityKey] = newValue }
    }
    /// The city.
    open override var city: String {
        get { field(CNPostalAddressCityKey) }
        set { storage[CNPostalAddressCityKey] = newValue }
    }
    /// The sub-administrative area.
    open override var subAdministrativeArea: String {
        get { field(CNPostalAddressSubAdministrativeAreaKey) }
        set { storage[CNPostalAddressSubAdministrativeAreaKey] = newValue }
    }
    /// The state or province.
    open override var state: String {
        get { field(CNPostalAddressStateKey) }
        set { storage[CNPostalAddressStateKey] = newValue }
    }
    /// The postal code.
    open override var postalCode: String {
        get { field(CNPostalAddressPostalCodeKey) }
        set { storage[CNPostalAddressPostalCodeKey] = newValue }
    }
    /// The country's name.
    open override var country: String {
        get { field(CNPostalAddressCountryKey) }
        set { storage[CNPostalAddressCountryKey] = newValue }
    }
    /// The ISO 3166-1 country code.
    open override var isoCountryCode: String {
        get { field(CNPostalAddressISOCountryCodeKey) }
        set { storage[CNPostalAddressISOCountryCodeKey] = newValue }
    }
}

/// A phone number as entered (Contacts' `CNPhoneNumber`).
public final class CNPhoneNumber: NSObject, Sendable {
    /// The number as text.
    public let stringValue: String
    /// A phone number.
    public init(stringValue: String) { self.stringValue = stringValue }
}
