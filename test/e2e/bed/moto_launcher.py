"""moto_server with the two gaps the real Karpenter controller falls into filled (test tooling).

Run with the moto venv's python, arguments as moto_server's (`-H 127.0.0.1 -p PORT`). Patches moto's
backends in this process, then serves exactly as `moto_server` does. Measured against moto 5.2.1:

1. SSM has none of the EKS-optimized AMI parameters that Karpenter reads to resolve
   `al2023@latest` (or `al2023@vYYYYMMDD`), and refuses PutParameter under /aws: every EC2NodeClass
   stays `AMIsReady=False`. Here `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/
   standard/<recommended|amazon-eks-node-al2023-...>/image_id` resolve, for x86_64 and arm64, to the
   AMI of moto's own `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-<arch>`
   parameter, an image that exists in moto's EC2 catalogue. The nvidia/neuron variants stay absent
   (moto has no such images; Karpenter skips a variant it cannot resolve).
2. CreateFleet builds each launch specification from the launch template's top-level `GroupSet`
   only, while Karpenter's templates put their security groups on `NetworkInterfaces[].Groups`
   (and the instance profile in `IamInstanceProfile`, which moto's on-demand path drops): every
   instance came up without the class's groups, so every NodeClaim went
   `Drifted=True (SecurityGroupDrift)` ~2 s after initialisation and was replaced. Here the fleet's
   specifications carry the template's interface groups, and each launched instance is associated
   with the template's instance profile, as EC2 does.
3. IAM has no ListInstanceProfileTags (NotImplementedError → HTTP 500), though it keeps the tags
   CreateInstanceProfile / TagInstanceProfile set: with real Karpenter's profiles present, karpctl
   teardown's sweep of Karpenter's leftovers reads them. Here it answers the stored tags.
4. EKS drops CreateCluster's `accessConfig`: DescribeCluster never reports `authenticationMode`, which
   AWS reports for every cluster (CONFIG_MAP for those older than access entries), so a cluster whose
   nodes join by access entry read as a ConfigMap-only one. Here the mode given at creation is kept
   and reported.
5. KMS EnableKey, DisableKey, CancelKeyDeletion and ScheduleKeyDeletion look the key up by its id
   only: given the key ARN, which AWS accepts ("KeyId: key ID or key ARN", KMS API reference) and
   doctor's printed `aws kms enable-key --key-id <arn>` uses, moto raises KeyError (HTTP 500). Here
   the ARN is read as its key id, as moto's other KMS calls already do (KmsBackend.get_key_id).
"""

import re
import sys

from moto.core.responses import ActionResult
from moto.eks import responses as eks_responses
from moto.ec2.models import fleets as moto_fleets
from moto.iam import responses as iam_responses
from moto.kms import models as kms_models
from moto.ssm import models as ssm_models

_EKS_AL2023 = re.compile(
    r"^/aws/service/eks/optimized-ami/[0-9.]+/amazon-linux-2023/(x86_64|arm64)/standard/"
    r"(recommended|amazon-eks-node-al2023-(?:x86_64|arm64)-standard-[0-9.]+-v[0-9]+)/image_id$"
)
_LATEST_AL2023 = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{}"

_check_loading_status = ssm_models.ParameterDict._check_loading_status


def _check_loading_status_with_eks(self, key):
    _check_loading_status(self, key)
    m = _EKS_AL2023.match(str(key or ""))
    if not m or dict.__contains__(self, key):
        return
    source = _LATEST_AL2023.format(m.group(1))
    _check_loading_status(self, source)
    versions = dict.get(self, source) or []
    if not versions:
        return  # a region without moto AMI data: the parameter stays absent, as before
    latest = versions[-1]
    self.setdefault(key, []).append(
        ssm_models.Parameter(
            account_id=self.account_id,
            name=key,
            value=latest.value,
            parameter_type="String",
            description=None,
            allowed_pattern=None,
            keyid=None,
            last_modified_date=latest.last_modified_date,
            version=1,
            data_type="aws:ec2:image",
        )
    )


ssm_models.ParameterDict._check_loading_status = _check_loading_status_with_eks


def _interface_groups(template_data):
    groups = []
    for nic in template_data.get("NetworkInterfaces") or template_data.get("NetworkInterface") or []:
        for key in ("Groups", "SecurityGroupIds", "SecurityGroupId", "Group"):
            value = nic.get(key)
            if isinstance(value, str):
                value = [value]
            groups.extend(value or [])
    return groups


_fleet_init = moto_fleets.Fleet.__init__
_spec_init = moto_fleets.SpotFleetLaunchSpec.__init__


def _fleet_init_keeping_template(self, ec2_backend, *args, **kwargs):
    # Fleet.__init__ resolves each template version and launches at once: give the launch specs
    # made inside it the template's interface groups, then associate the template's profile.
    template_groups = {}

    def spec_init(spec, *a, **kw):
        _spec_init(spec, *a, **kw)
        lt = spec.launch_template_spec or {}
        key = (lt.get("LaunchTemplateId"), str(lt.get("Version")))
        if key not in template_groups:
            template = ec2_backend.get_launch_template(template_id=lt.get("LaunchTemplateId"))
            template_groups[key] = _interface_groups(template.get_version(lt.get("Version")).data)
        if not spec.group_set:
            spec.group_set = list(template_groups[key])

    moto_fleets.SpotFleetLaunchSpec.__init__ = spec_init
    try:
        _fleet_init(self, ec2_backend, *args, **kwargs)
    finally:
        moto_fleets.SpotFleetLaunchSpec.__init__ = _spec_init
    launched = [(i["instance"], i.get("launch_spec")) for i in self.on_demand_instances]
    launched += [(r.instance, r.launch_spec) for r in self.spot_requests if getattr(r, "instance", None)]
    for instance, spec in launched:
        profile = getattr(spec, "_iam_instance_profile_arn", None) or {}
        if not profile or instance.id in ec2_backend.iam_instance_profile_associations:
            continue
        ec2_backend.associate_iam_instance_profile(
            instance_id=instance.id,
            iam_instance_profile_name=profile.get("Name"),
            iam_instance_profile_arn=profile.get("Arn"),
        )


moto_fleets.Fleet.__init__ = _fleet_init_keeping_template


def _list_instance_profile_tags(self):
    profile = self.backend.get_instance_profile(self._get_param("InstanceProfileName"))
    return ActionResult({"Tags": list(profile.tags), "IsTruncated": False})


iam_responses.IamResponse.list_instance_profile_tags = _list_instance_profile_tags

_create_cluster = eks_responses.EKSResponse.create_cluster


def _create_cluster_keeping_access_config(self):
    result = _create_cluster(self)
    access = self._get_param("accessConfig") or {}
    cluster = self.eks_backend.describe_cluster(name=self._get_param("name"))
    cluster.access_config = {"authenticationMode": access.get("authenticationMode", "CONFIG_MAP")}
    return result


eks_responses.EKSResponse.create_cluster = _create_cluster_keeping_access_config



def _by_key_arn(name):
    original = getattr(kms_models.KmsBackend, name)

    def call(self, key_id, *args, **kwargs):
        return original(self, self.get_key_id(key_id), *args, **kwargs)

    return call


for _name in ("enable_key", "disable_key", "cancel_key_deletion", "schedule_key_deletion"):
    setattr(kms_models.KmsBackend, _name, _by_key_arn(_name))

if __name__ == "__main__":
    from moto.server import main

    sys.argv[0] = "moto_server"
    sys.exit(main())
