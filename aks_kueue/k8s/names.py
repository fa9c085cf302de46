"""Kubernetes' name rules (k8s.io/apimachinery/pkg/util/validation/validation.go): one regex each,
with the API server's messages. Each `*_problem` returns the first message, or None when the value
is a valid name of that kind."""

from __future__ import annotations

import re
from typing import Any, Optional

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE = f"({_QUALIFIED})?"

DNS1123_LABEL = re.compile(_LABEL)
DNS1123_SUBDOMAIN = re.compile(_SUBDOMAIN)
DNS1035_LABEL = re.compile(_DNS1035)
QUALIFIED_NAME = re.compile(_QUALIFIED)
LABEL_VALUE = re.compile(_VALUE)

LABEL_MAX = 63
SUBDOMAIN_MAX = 253

DNS1123_LABEL_MESSAGE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                         f"must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
                         f"used for validation is '{_LABEL}')")
DNS1123_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                             "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                             f"regex used for validation is '{_SUBDOMAIN}')")
DNS1035_LABEL_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                         "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
                         f"'abc-123', regex used for validation is '{_DNS1035}')")
QUALIFIED_NAME_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                          "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                          f"validation is '{_QUALIFIED}')")
LABEL_VALUE_MESSAGE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                       "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                       f"'my_value',  or '12345', regex used for validation is '{_VALUE}')")


def _problem(value: Any, pattern: re.Pattern, message: str, limit: int) -> Optional[str]:
    if not isinstance(value, str):
        return message
    if len(value) > limit:
        return f"must be no more than {limit} characters"
    return None if pattern.fullmatch(value) else message


def dns1123_label_problem(value: Any) -> Optional[str]:
    return _problem(value, DNS1123_LABEL, DNS1123_LABEL_MESSAGE, LABEL_MAX)


def dns1123_subdomain_problem(value: Any) -> Optional[str]:
    return _problem(value, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MESSAGE, SUBDOMAIN_MAX)


def dns1035_label_problem(value: Any) -> Optional[str]:
    return _problem(value, DNS1035_LABEL, DNS1035_LABEL_MESSAGE, LABEL_MAX)


def qualified_name_problem(value: Any) -> Optional[str]:
    """`IsQualifiedName`: an optional DNS-subdomain prefix and a slash, then a name of 63 characters."""
    if not isinstance(value, str):
        return "a qualified name " + QUALIFIED_NAME_MESSAGE
    parts = value.split("/")
    if len(parts) > 2:
        return "a qualified name " + QUALIFIED_NAME_MESSAGE + " with an optional DNS subdomain prefix and '/' " \
               "(e.g. 'example.com/MyName')"
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        problem = dns1123_subdomain_problem(prefix)
        if problem:
            return "prefix part " + problem
    else:
        name = parts[0]
    if not name:
        return "name part must be non-empty"
    if len(name) > LABEL_MAX:
        return f"name part must be no more than {LABEL_MAX} characters"
    return None if QUALIFIED_NAME.fullmatch(name) else "name part " + QUALIFIED_NAME_MESSAGE


def label_value_problem(value: Any) -> Optional[str]:
    return _problem(value, LABEL_VALUE, LABEL_VALUE_MESSAGE, LABEL_MAX)
