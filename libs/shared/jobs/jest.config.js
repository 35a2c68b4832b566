module.exports = {
  displayName: 'shared-jobs',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
