from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DATA_TYPE_UNSET: _ClassVar[DataType]
    DATA_TYPE_STRING: _ClassVar[DataType]
    DATA_TYPE_BOOL: _ClassVar[DataType]
    DATA_TYPE_FLOAT64: _ClassVar[DataType]

class DatasetType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DATASET_UNKNOWN: _ClassVar[DatasetType]
    DATASET_TRAINING: _ClassVar[DatasetType]
    DATASET_VALIDATION: _ClassVar[DatasetType]

class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATUS_UNKNOWN: _ClassVar[Status]
    STATUS_SUCCESS: _ClassVar[Status]
    STATUS_FAILURE: _ClassVar[Status]
    STATUS_RUNNING: _ClassVar[Status]
DATA_TYPE_UNSET: DataType
DATA_TYPE_STRING: DataType
DATA_TYPE_BOOL: DataType
DATA_TYPE_FLOAT64: DataType
DATASET_UNKNOWN: DatasetType
DATASET_TRAINING: DatasetType
DATASET_VALIDATION: DatasetType
STATUS_UNKNOWN: Status
STATUS_SUCCESS: Status
STATUS_FAILURE: Status
STATUS_RUNNING: Status

class TextPluginData(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    def __init__(self, version: _Optional[int] = ...) -> None: ...

class PrCurvePluginData(_message.Message):
    __slots__ = ("version", "num_thresholds")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NUM_THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    version: int
    num_thresholds: int
    def __init__(self, version: _Optional[int] = ..., num_thresholds: _Optional[int] = ...) -> None: ...

class MeshPluginData(_message.Message):
    __slots__ = ("version", "name", "content_type", "json_config", "shape", "components")
    class ContentType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNDEFINED: _ClassVar[MeshPluginData.ContentType]
        VERTEX: _ClassVar[MeshPluginData.ContentType]
        FACE: _ClassVar[MeshPluginData.ContentType]
        COLOR: _ClassVar[MeshPluginData.ContentType]
    UNDEFINED: MeshPluginData.ContentType
    VERTEX: MeshPluginData.ContentType
    FACE: MeshPluginData.ContentType
    COLOR: MeshPluginData.ContentType
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    JSON_CONFIG_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    version: int
    name: str
    content_type: MeshPluginData.ContentType
    json_config: str
    shape: _containers.RepeatedScalarFieldContainer[int]
    components: int
    def __init__(self, version: _Optional[int] = ..., name: _Optional[str] = ..., content_type: _Optional[_Union[MeshPluginData.ContentType, str]] = ..., json_config: _Optional[str] = ..., shape: _Optional[_Iterable[int]] = ..., components: _Optional[int] = ...) -> None: ...

class Chart(_message.Message):
    __slots__ = ("title", "multiline", "margin")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MULTILINE_FIELD_NUMBER: _ClassVar[int]
    MARGIN_FIELD_NUMBER: _ClassVar[int]
    title: str
    multiline: MultilineChartContent
    margin: MarginChartContent
    def __init__(self, title: _Optional[str] = ..., multiline: _Optional[_Union[MultilineChartContent, _Mapping]] = ..., margin: _Optional[_Union[MarginChartContent, _Mapping]] = ...) -> None: ...

class MultilineChartContent(_message.Message):
    __slots__ = ("tag",)
    TAG_FIELD_NUMBER: _ClassVar[int]
    tag: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tag: _Optional[_Iterable[str]] = ...) -> None: ...

class MarginChartContent(_message.Message):
    __slots__ = ("series",)
    class Series(_message.Message):
        __slots__ = ("value", "lower", "upper")
        VALUE_FIELD_NUMBER: _ClassVar[int]
        LOWER_FIELD_NUMBER: _ClassVar[int]
        UPPER_FIELD_NUMBER: _ClassVar[int]
        value: str
        lower: str
        upper: str
        def __init__(self, value: _Optional[str] = ..., lower: _Optional[str] = ..., upper: _Optional[str] = ...) -> None: ...
    SERIES_FIELD_NUMBER: _ClassVar[int]
    series: _containers.RepeatedCompositeFieldContainer[MarginChartContent.Series]
    def __init__(self, series: _Optional[_Iterable[_Union[MarginChartContent.Series, _Mapping]]] = ...) -> None: ...

class Category(_message.Message):
    __slots__ = ("title", "chart", "closed")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CHART_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    title: str
    chart: _containers.RepeatedCompositeFieldContainer[Chart]
    closed: bool
    def __init__(self, title: _Optional[str] = ..., chart: _Optional[_Iterable[_Union[Chart, _Mapping]]] = ..., closed: bool = ...) -> None: ...

class Layout(_message.Message):
    __slots__ = ("version", "category")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    version: int
    category: _containers.RepeatedCompositeFieldContainer[Category]
    def __init__(self, version: _Optional[int] = ..., category: _Optional[_Iterable[_Union[Category, _Mapping]]] = ...) -> None: ...

class Interval(_message.Message):
    __slots__ = ("min_value", "max_value")
    MIN_VALUE_FIELD_NUMBER: _ClassVar[int]
    MAX_VALUE_FIELD_NUMBER: _ClassVar[int]
    min_value: float
    max_value: float
    def __init__(self, min_value: _Optional[float] = ..., max_value: _Optional[float] = ...) -> None: ...

class HParamInfo(_message.Message):
    __slots__ = ("name", "display_name", "description", "type", "domain_discrete", "domain_interval", "differs")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_DISCRETE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    DIFFERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    display_name: str
    description: str
    type: DataType
    domain_discrete: _struct_pb2.ListValue
    domain_interval: Interval
    differs: bool
    def __init__(self, name: _Optional[str] = ..., display_name: _Optional[str] = ..., description: _Optional[str] = ..., type: _Optional[_Union[DataType, str]] = ..., domain_discrete: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ..., domain_interval: _Optional[_Union[Interval, _Mapping]] = ..., differs: bool = ...) -> None: ...

class MetricName(_message.Message):
    __slots__ = ("group", "tag")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    TAG_FIELD_NUMBER: _ClassVar[int]
    group: str
    tag: str
    def __init__(self, group: _Optional[str] = ..., tag: _Optional[str] = ...) -> None: ...

class MetricInfo(_message.Message):
    __slots__ = ("name", "display_name", "description", "dataset_type")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DATASET_TYPE_FIELD_NUMBER: _ClassVar[int]
    name: MetricName
    display_name: str
    description: str
    dataset_type: DatasetType
    def __init__(self, name: _Optional[_Union[MetricName, _Mapping]] = ..., display_name: _Optional[str] = ..., description: _Optional[str] = ..., dataset_type: _Optional[_Union[DatasetType, str]] = ...) -> None: ...

class Experiment(_message.Message):
    __slots__ = ("name", "description", "user", "time_created_secs", "hparam_infos", "metric_infos")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    TIME_CREATED_SECS_FIELD_NUMBER: _ClassVar[int]
    HPARAM_INFOS_FIELD_NUMBER: _ClassVar[int]
    METRIC_INFOS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    user: str
    time_created_secs: float
    hparam_infos: _containers.RepeatedCompositeFieldContainer[HParamInfo]
    metric_infos: _containers.RepeatedCompositeFieldContainer[MetricInfo]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., user: _Optional[str] = ..., time_created_secs: _Optional[float] = ..., hparam_infos: _Optional[_Iterable[_Union[HParamInfo, _Mapping]]] = ..., metric_infos: _Optional[_Iterable[_Union[MetricInfo, _Mapping]]] = ...) -> None: ...

class SessionStartInfo(_message.Message):
    __slots__ = ("hparams", "model_uri", "monitor_url", "group_name", "start_time_secs")
    class HparamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _struct_pb2.Value
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...
    HPARAMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_URI_FIELD_NUMBER: _ClassVar[int]
    MONITOR_URL_FIELD_NUMBER: _ClassVar[int]
    GROUP_NAME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_SECS_FIELD_NUMBER: _ClassVar[int]
    hparams: _containers.MessageMap[str, _struct_pb2.Value]
    model_uri: str
    monitor_url: str
    group_name: str
    start_time_secs: float
    def __init__(self, hparams: _Optional[_Mapping[str, _struct_pb2.Value]] = ..., model_uri: _Optional[str] = ..., monitor_url: _Optional[str] = ..., group_name: _Optional[str] = ..., start_time_secs: _Optional[float] = ...) -> None: ...

class SessionEndInfo(_message.Message):
    __slots__ = ("status", "end_time_secs")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    END_TIME_SECS_FIELD_NUMBER: _ClassVar[int]
    status: Status
    end_time_secs: float
    def __init__(self, status: _Optional[_Union[Status, str]] = ..., end_time_secs: _Optional[float] = ...) -> None: ...

class HParamsPluginData(_message.Message):
    __slots__ = ("version", "experiment", "session_start_info", "session_end_info")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENT_FIELD_NUMBER: _ClassVar[int]
    SESSION_START_INFO_FIELD_NUMBER: _ClassVar[int]
    SESSION_END_INFO_FIELD_NUMBER: _ClassVar[int]
    version: int
    experiment: Experiment
    session_start_info: SessionStartInfo
    session_end_info: SessionEndInfo
    def __init__(self, version: _Optional[int] = ..., experiment: _Optional[_Union[Experiment, _Mapping]] = ..., session_start_info: _Optional[_Union[SessionStartInfo, _Mapping]] = ..., session_end_info: _Optional[_Union[SessionEndInfo, _Mapping]] = ...) -> None: ...

class SpriteMetadata(_message.Message):
    __slots__ = ("image_path", "single_image_dim")
    IMAGE_PATH_FIELD_NUMBER: _ClassVar[int]
    SINGLE_IMAGE_DIM_FIELD_NUMBER: _ClassVar[int]
    image_path: str
    single_image_dim: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, image_path: _Optional[str] = ..., single_image_dim: _Optional[_Iterable[int]] = ...) -> None: ...

class EmbeddingInfo(_message.Message):
    __slots__ = ("tensor_name", "metadata_path", "bookmarks_path", "tensor_shape", "sprite", "tensor_path")
    TENSOR_NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_PATH_FIELD_NUMBER: _ClassVar[int]
    BOOKMARKS_PATH_FIELD_NUMBER: _ClassVar[int]
    TENSOR_SHAPE_FIELD_NUMBER: _ClassVar[int]
    SPRITE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_PATH_FIELD_NUMBER: _ClassVar[int]
    tensor_name: str
    metadata_path: str
    bookmarks_path: str
    tensor_shape: _containers.RepeatedScalarFieldContainer[int]
    sprite: SpriteMetadata
    tensor_path: str
    def __init__(self, tensor_name: _Optional[str] = ..., metadata_path: _Optional[str] = ..., bookmarks_path: _Optional[str] = ..., tensor_shape: _Optional[_Iterable[int]] = ..., sprite: _Optional[_Union[SpriteMetadata, _Mapping]] = ..., tensor_path: _Optional[str] = ...) -> None: ...

class ProjectorConfig(_message.Message):
    __slots__ = ("model_checkpoint_path", "embeddings", "model_checkpoint_dir")
    MODEL_CHECKPOINT_PATH_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    MODEL_CHECKPOINT_DIR_FIELD_NUMBER: _ClassVar[int]
    model_checkpoint_path: str
    embeddings: _containers.RepeatedCompositeFieldContainer[EmbeddingInfo]
    model_checkpoint_dir: str
    def __init__(self, model_checkpoint_path: _Optional[str] = ..., embeddings: _Optional[_Iterable[_Union[EmbeddingInfo, _Mapping]]] = ..., model_checkpoint_dir: _Optional[str] = ...) -> None: ...
