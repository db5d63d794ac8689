"""to_dict() for the result and input classes of pe._core: every public property, with
nested objects, lists and None converted the same way."""


# Properties left out of to_dict(): PointResult.best repeats plans[0].
_REPEATED = {"best"}


def _plain(value):
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def to_dict(obj):
    """The object's public properties as a dict (nested objects as dicts)."""
    cls = type(obj)
    return {
        name: _plain(getattr(obj, name))
        for name in sorted(dir(cls))
        if not name.startswith("_") and name not in _REPEATED
        and isinstance(getattr(cls, name), property)
    }


def add_to_dict(*classes):
    for cls in classes:
        cls.to_dict = to_dict
