# Validity: the lookups of its rule (validity/gather.smk): the validity tables the enabled
# measures write (docs/validity.md).
VALIDITY_FILES = exit_on_config_error(plan.validity.files, config)
